package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/torchrt"
)

// Options control a run without changing its results.
type Options struct {
	// Workers overrides the config's workers (0: keep it).
	Workers int
	// Threads overrides the config's libtorch threads (0: keep it).
	Threads int
	// Shard and Shards make this process run only the cells whose index
	// in the sweep is Shard modulo Shards (Shards 0: all cells); a
	// cluster runs one shard per node or GPU over a shared output folder.
	Shard, Shards int
	// Spawn starts the worker process of one shard: the same binary, run
	// on the resolved config at path with --shard and --threads. With
	// Workers > 1 and Spawn set, cells run in Workers processes, each with
	// its own libtorch generator and threads; without Spawn, one at a time
	// in this process.
	Spawn func(ctx context.Context, config string, shard, shards, threads int) *exec.Cmd
	// DryRun lists the cells and what is cached, and runs nothing.
	DryRun bool
	// Progress receives progress bars (drawn on terminals only); Log one
	// line per event. Either may be nil.
	Progress, Log io.Writer
}

// CellStatus is one cell of a run's plan or outcome.
type CellStatus struct {
	Key    string           `json:"key"`
	Cell   experiments.Cell `json:"cell"`
	Status string           `json:"status"` // cached, todo, ok, failed, other-shard
	Error  string           `json:"error,omitempty"`
}

// Summary is what a run did.
type Summary struct {
	Out    string       `json:"out"`
	Config string       `json:"config"` // the resolved config in the run folder
	Cells  []CellStatus `json:"cells"`
	Reused int          `json:"reused"`
	Ran    int          `json:"ran"`
	Failed int          `json:"failed"`
	Tables []string     `json:"tables,omitempty"`
	Plots  []string     `json:"plots,omitempty"`
	// Rows (utility) or Stats (analyses) is the table written (not in the
	// manifest: the records are).
	Rows  []results.Row     `json:"-"`
	Stats []results.StatRow `json:"-"`
	// Stages are the results of the config's stages, run after the cells.
	Stages []CellStatus `json:"stages,omitempty"`
}

// ResolvedName is the resolved config's file in a run folder.
const ResolvedName = "config.yaml"

// Run executes the config's sweep: cells with a successful record are
// reused, the others are run (privatizing through the corpus cache,
// training, evaluating) and recorded atomically one by one; a failing cell
// is recorded with its error and the sweep goes on. Unless sharded, Run
// then writes the manifest, tables and plots. c is not changed.
func Run(ctx context.Context, c *experiments.Config, opt Options) (Summary, error) {
	started := time.Now()
	sum := Summary{Out: c.Output}
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format+"\n", args...)
		}
	}
	if !opt.DryRun {
		if err := xio.CheckWritable("output", c.Output); err != nil {
			return sum, c.ErrAt(err.Error(), "output")
		}
		for _, sub := range []string{"", "tables", "plots"} {
			if _, err := xio.CleanTemps(filepath.Join(c.Output, sub)); err != nil {
				return sum, fmt.Errorf("output: %w", err)
			}
		}
	}
	threads, workers := runShape(c, opt)
	if err := torchrt.SetThreads(threads); err != nil {
		// libtorch fixes its pool once parallel work has run in the
		// process; records carry the count actually used.
		logf("warning: %v; running with %d threads", err, torchrt.Threads())
	}
	s, err := Open(ctx, c, SessionOptions{Log: opt.Log, Progress: opt.Progress, ReadOnly: opt.DryRun})
	if err != nil {
		return sum, err
	}
	defer s.Close()
	store, err := results.OpenStore(c.Output)
	if err != nil {
		return sum, err
	}
	todo, err := plan(s, store, opt, &sum)
	if err != nil {
		return sum, err
	}
	logf("%s: %d cells, %d cached, %d to run (data %.12s, vectors %.12s)", c.File(), len(sum.Cells), sum.Reused, len(todo), s.in.sums.Data, s.in.sums.Embedding)
	for _, p := range store.Problems() {
		logf("warning: %s", p)
	}
	if opt.DryRun {
		return sum, nil
	}
	resolved, err := c.Resolved()
	if err != nil {
		return sum, err
	}
	sum.Config = filepath.Join(c.Output, ResolvedName)
	if err := xio.WriteFileAtomic(sum.Config, resolved); err != nil {
		return sum, fmt.Errorf("output: %w", err)
	}
	prov := newProvenance(s, resolved)
	prov.Started = started.UTC().Format(time.RFC3339)
	if workers > 1 && opt.Spawn != nil && opt.Shards == 0 && len(todo) > 1 {
		err = spawn(ctx, opt, sum.Config, workers, len(todo), store, sum.Cells)
	} else {
		err = execute(ctx, s, store, prov, todo, workers <= 1 || opt.Spawn == nil, opt, &sum)
	}
	if err != nil {
		return sum, err
	}
	if err := collect(store, &sum); err != nil {
		return sum, err
	}
	if opt.Shards > 1 {
		return sum, nil
	}
	if err := runStages(ctx, s, store, prov, &sum); err != nil {
		return sum, err
	}
	return sum, writeOutputs(s.c, store, &sum, prov, time.Since(started))
}

// runShape is the thread count of this process and the number of worker
// processes.
func runShape(c *experiments.Config, opt Options) (threads, workers int) {
	workers, threads = c.Workers, c.Threads
	if opt.Workers > 0 {
		workers = opt.Workers
	}
	if opt.Threads > 0 {
		threads = opt.Threads
	}
	if threads == 0 && opt.Shards > 1 {
		threads = max(1, runtime.NumCPU()/opt.Shards)
	}
	return threads, workers
}

// plan lists every cell with its status: cached (a successful record
// exists), other-shard, or todo; it returns the indices of the todo cells.
func plan(s *Session, store *results.Store, opt Options, sum *Summary) ([]int, error) {
	var todo []int
	for i, cell := range s.c.Cells() {
		cs := CellStatus{Key: s.Key(cell), Cell: cell, Status: "todo"}
		switch done, err := store.Done(cs.Key); {
		case err != nil:
			return nil, err
		case done:
			cs.Status = "cached"
			sum.Reused++
		case opt.Shards > 1 && i%opt.Shards != opt.Shard:
			cs.Status = "other-shard"
		default:
			todo = append(todo, i)
		}
		sum.Cells = append(sum.Cells, cs)
	}
	return todo, nil
}

// execute runs the todo cells one by one in this process, recording each;
// nested draws privatization and epoch bars under the sweep's bar.
func execute(ctx context.Context, s *Session, store *results.Store, prov results.Provenance, todo []int, nested bool, opt Options, sum *Summary) error {
	bar := progress.New(opt.Progress, int64(len(todo)), "cells", false)
	defer bar.Finish()
	inner := opt.Progress
	if !nested {
		inner = nil
	}
	for _, i := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		cs := &sum.Cells[i]
		rec := s.run(ctx, cs.Key, cs.Cell, prov, inner)
		if errors.Is(ctx.Err(), context.Canceled) {
			return ctx.Err() // an interrupted cell is not recorded: the next run redoes it
		}
		if err := store.Put(rec); err != nil {
			return err
		}
		s.logf("%s: %s", cs.Cell, outcome(rec))
		for _, f := range rec.Flags {
			s.logf("  warning: %s", f)
		}
		bar.Add(1)
	}
	return nil
}

// collect sets the final status of every cell this run was to run from
// the store: the only truth, whoever ran the cells.
func collect(store *results.Store, sum *Summary) error {
	for i := range sum.Cells {
		cs := &sum.Cells[i]
		if cs.Status == "cached" || cs.Status == "other-shard" {
			continue
		}
		r, ok, err := store.Get(cs.Key)
		switch {
		case err != nil:
			return err
		case !ok:
			cs.Status, cs.Error = "failed", "no record: its worker stopped before finishing it"
		case r.Status == "ok":
			cs.Status = "ok"
		default:
			cs.Status, cs.Error = "failed", r.Error
		}
		if cs.Status == "ok" {
			sum.Ran++
		} else {
			sum.Failed++
		}
	}
	return nil
}

func outcome(r results.Record) string {
	if r.Status != "ok" {
		return "FAILED: " + r.Error
	}
	if a := r.Analysis; a != nil {
		var parts []string
		for _, st := range a.Stats[:min(4, len(a.Stats))] {
			parts = append(parts, fmt.Sprintf("%s %.4g", st.Name, float64(st.Value)))
		}
		return fmt.Sprintf("%s (%s, %.0f s)", strings.Join(parts, ", "), a.Method, r.Provenance.WallSeconds)
	}
	return fmt.Sprintf("accuracy %.4f, macro-F1 %.4f (%.0f s)", r.Test.Accuracy, r.Test.MacroF1, r.Provenance.WallSeconds)
}
