package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/torchrt"
)

// Options control a run without changing its results.
type Options struct {
	// Threads overrides the config's libtorch threads (0: keep it).
	Threads int
	// Shard and Shards make this process run only the cells of the
	// groups whose number is Shard modulo Shards (Shards 0: all cells; see
	// experiments.GroupKey); a cluster runs one shard per task over a
	// shared output folder.
	Shard, Shards int
	// Launcher runs the sweep's shards in other processes (Local: worker
	// processes; a cluster's: jobs). Nil: the cells run one at a time in
	// this process.
	Launcher Launcher
	// Queue: the launcher queues the shards on a batch scheduler and
	// returns (the slurm package). This process only plans: it opens no
	// device (a CUDA config plans on a login node without a GPU), builds
	// no cache, and writes no table.
	Queue bool
	// Worker marks a worker process of Local: its log has one line per
	// finished cell (passed on by the parent), no header.
	Worker bool
	// DryRun lists the cells and what is cached, and runs nothing.
	DryRun bool
	// Startup is how long the process took to start before Run (loading
	// libtorch): a dry run's estimate adds it to the inputs' loading.
	Startup time.Duration
	// Prepare builds what several groups share (see prepare) and writes
	// the run folder's config and plan, and runs no cell: a cluster's
	// first job.
	Prepare bool
	// Merge runs no cell: it reads the records that are there, runs the
	// stages and writes the tables and plots (cells without a record are
	// reported missing): a cluster's last job.
	Merge bool
	// KeepComplete: where every cell of the plan already has a record and
	// the folder holds a finished run of exactly these cells, with its
	// stages' records (rundir.State.Complete), Run writes nothing — no
	// config, plan, manifest, table or plot — and returns with
	// Summary.Complete set. For run folders a repository keeps (the
	// paper runs), which a run that changes nothing must leave as they
	// are.
	KeepComplete bool
	// Progress receives progress bars (drawn on terminals only); Log one
	// line per event. Either may be nil.
	Progress, Log io.Writer
}

// Summary is what a run did: what its manifest records (rundir.Outcome)
// and what only this process has.
type Summary struct {
	rundir.Outcome
	// Rows (utility) or Stats (analyses) is the table written (not in the
	// manifest: the records are).
	Rows  []results.Row     `json:"-"`
	Stats []results.StatRow `json:"-"`
	// Estimate is a dry run's account of the work to do.
	Estimate *Estimate `json:"-"`
	// Complete says the folder held the whole run already and nothing
	// was written (Options.KeepComplete).
	Complete bool `json:"-"`
}

// Run executes the config's sweep: cells with a successful record are
// reused, the others are run (privatizing through the corpus cache,
// training, evaluating) and recorded atomically one by one; a failing cell
// is recorded with its error and the sweep goes on. Unless sharded, Run
// then writes the manifest, tables and plots. c is not changed.
func Run(ctx context.Context, c *experiments.Config, opt Options) (Summary, error) {
	started := time.Now()
	sum := Summary{Outcome: rundir.Outcome{Out: c.Output}}
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format+"\n", args...)
		}
	}
	if err := ownOutput(c); err != nil {
		return sum, err
	}
	if err := ownCache(c); err != nil {
		return sum, err
	}
	_, statErr := os.Stat(c.Output)
	created := errors.Is(statErr, fs.ErrNotExist) && !opt.DryRun // by the writable check below
	if !opt.DryRun {
		if err := xio.CheckWritable("output", c.Output); err != nil {
			return sum, c.ErrAt(err.Error(), "output")
		}
		if !opt.Worker { // a worker's parent holds the lock for it
			release, err := lockOutput(c.Output, opt.Shards > 0)
			if err != nil {
				return sum, c.ErrAt(err.Error(), "output")
			}
			defer release()
		}
		for _, sub := range []string{"", "tables", "plots"} {
			if _, err := xio.CleanTemps(filepath.Join(c.Output, sub)); err != nil {
				return sum, fmt.Errorf("output: %w", err)
			}
		}
		if err := rundir.WriteMarker(c.Output); err != nil {
			return sum, fmt.Errorf("output: %w", err)
		}
	}
	threads := runThreads(c, opt)
	if err := torchrt.SetThreads(threads); err != nil {
		// libtorch fixes its pool once parallel work has run in the
		// process; records carry the count actually used.
		logf("warning: %v; running with %d threads", err, torchrt.Threads())
	}
	s, err := Open(ctx, c, SessionOptions{Log: opt.Log, Progress: opt.Progress, ReadOnly: opt.DryRun || opt.Queue})
	if err != nil {
		if created {
			// Refused before it began: no folder left behind but the one
			// this process made, with only its own lock in it (Remove
			// takes only an empty folder).
			if opt.Shards == 0 { // held alone: no shard beside it reads the lock
				os.Remove(filepath.Join(c.Output, LockName))
			}
			os.Remove(filepath.Join(c.Output, rundir.MarkerName))
			os.Remove(c.Output)
		}
		return sum, err
	}
	defer s.Close()
	openStore := results.OpenStore
	if opt.DryRun {
		openStore = results.ReadStore // a dry run writes nothing
	}
	store, err := openStore(c.Output)
	if err != nil {
		return sum, err
	}
	p, err := newPlan(s, store, opt)
	if err != nil {
		return sum, err
	}
	todo := p.todo
	sum.Cells, sum.Groups, sum.Reused = slices.Clone(p.cells), p.groups, p.reused
	if !opt.Worker {
		what := "to run"
		if opt.Merge {
			what = "without a record (a merge runs none)"
		}
		logf("%s: %d cells in %d groups, %d cached, %d %s (data %.12s, vectors %.12s)", c.File(), len(sum.Cells), sum.Groups, sum.Reused, len(todo), what, s.in.sums.Data, s.in.sums.Embedding)
	}
	for _, problem := range store.Problems() {
		logf("warning: %s", problem)
	}
	if opt.DryRun {
		sum.Estimate = newEstimator(s, p, store, torchrt.Threads()).estimate(ctx, opt.Startup)
		return sum, nil
	}
	if opt.KeepComplete && len(todo) == 0 && !opt.Merge && !opt.Prepare && !opt.Queue && opt.Shards == 0 {
		if st, err := rundir.ReadState(c.Output); err == nil && st.Complete() && slices.Equal(rundir.KeysOf(st.Plan.Cells), rundir.KeysOf(sum.Cells)) {
			sum.Complete = true
			logf("%s: every cell and stage recorded, as its plan and manifest list them: nothing written", c.Output)
			return sum, nil
		}
	}
	resolved, err := c.Resolved()
	if err != nil {
		return sum, err
	}
	sum.Config = filepath.Join(c.Output, rundir.ResolvedName)
	if err := xio.WriteFileAtomic(sum.Config, resolved); err != nil {
		return sum, fmt.Errorf("output: %w", err)
	}
	if err := writePlan(c.Output, s.c, &sum); err != nil {
		return sum, err
	}
	prov := newProvenance(s, resolved)
	prov.Started = started.UTC().Format(time.RFC3339)
	switch {
	case opt.Prepare:
		return sum, prepare(ctx, s, p)
	case opt.Merge:
		todo = nil
	case opt.Launcher != nil && opt.Shards == 0 && (len(todo) > 0 || opt.Queue):
		sw := &Sweep{Config: sum.Config, Out: c.Output, Groups: sum.Groups, Cells: sum.Cells, Threads: opt.Threads, store: store}
		if err := opt.Launcher.Launch(ctx, sw); err != nil || opt.Queue {
			sum.Queued = err == nil
			return sum, interrupted(ctx, err, store, &sum)
		}
		todo = nil
	}
	if err := execute(ctx, s, store, prov, todo, opt, &sum); err != nil {
		return sum, interrupted(ctx, err, store, &sum)
	}
	if err := collect(store, &sum); err != nil {
		return sum, err
	}
	if opt.Shards > 1 {
		return sum, nil
	}
	if err := runStages(ctx, s, p, store, prov, &sum); err != nil {
		return sum, err
	}
	w := time.Now()
	if err := writeOutputs(s.c, store, &sum, prov, time.Since(started)); err != nil {
		return sum, err
	}
	if secs := time.Since(w).Seconds(); secs > 0 && len(sum.Cells) > 0 {
		s.rates.note(outputsRate, rate{PerSec: float64(len(sum.Cells)) / secs})
	}
	return sum, nil
}

// Interrupted is Run's error when its context was cancelled (Ctrl-C,
// SIGTERM) before the sweep finished: the cells recorded are kept, the
// one in flight is not recorded, and running again resumes.
type Interrupted struct {
	Recorded, Cells int // cells with a successful record, of all
}

func (e Interrupted) Error() string {
	return fmt.Sprintf("interrupted: %d of %d cells recorded; run again to resume", e.Recorded, e.Cells)
}

// interrupted turns err into Interrupted when ctx was cancelled, counting
// the cells recorded by then (in this process or its workers).
func interrupted(ctx context.Context, err error, store *results.Store, sum *Summary) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	if cerr := collect(store, sum); cerr != nil {
		return errors.Join(err, cerr)
	}
	return Interrupted{Recorded: sum.Reused + sum.Ran, Cells: len(sum.Cells)}
}

// runThreads is the thread count of this process.
func runThreads(c *experiments.Config, opt Options) (threads int) {
	threads = c.Threads
	if opt.Threads > 0 {
		threads = opt.Threads
	}
	if threads == 0 && opt.Shards > 1 {
		threads = max(1, runtime.NumCPU()/opt.Shards)
	}
	return threads
}

// execute runs the todo cells one by one in this process, recording each;
// privatization and epoch bars are drawn under the sweep's bar.
func execute(ctx context.Context, s *Session, store *results.Store, prov results.Provenance, todo []int, opt Options, sum *Summary) error {
	if len(todo) == 0 {
		return nil
	}
	bar := progress.New(opt.Progress, int64(len(todo)), "cells", false)
	defer bar.Finish()
	inner := opt.Progress
	for _, i := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		cs := &sum.Cells[i]
		if _, err := s.record(ctx, store, cs.Key, cs.Cell, prov, inner); err != nil {
			return err
		}
		bar.Add(1)
	}
	return nil
}

// record runs one cell and records its result — the one place a cell's
// record is written, whoever asked for the cell (the sweep, or a stage
// that decided on it) — then notes its rates and logs its outcome. A cell
// interrupted by ctx is not recorded: the next run redoes it.
func (s *Session) record(ctx context.Context, store *results.Store, key string, cell experiments.Cell, prov results.Provenance, progress io.Writer) (results.Record, error) {
	rec := s.run(ctx, key, cell, prov, progress)
	if err := ctx.Err(); err != nil {
		return rec, err
	}
	if err := store.Put(rec); err != nil {
		return rec, err
	}
	s.rates.observe(rec.Provenance.Host, s.rates.measuredBy(rec))
	s.logf("%s: %s", cell, outcome(rec))
	for _, f := range rec.Flags {
		s.logf("  warning: %s", f)
	}
	return rec, nil
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
		if err != nil {
			return err
		}
		switch cs.Status, cs.Error = rundir.StatusOf(r, ok); cs.Status {
		case "missing":
			sum.Missing++
		case "ok":
			sum.Ran++
			if r.Model != "" && !r.Provenance.ModelReused {
				sum.Trained++
			}
		default:
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
