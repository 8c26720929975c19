package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
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
