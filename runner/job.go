package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/torchrt"
)

// A Job is one config's sweep opened in this process (Start): its output
// folder taken, its inputs loaded, its records' store and its plan. Its
// verbs are the steps a command chooses among — Estimate (a dry run),
// Prepare (a cluster's first job), Execute (the cells to run, here or
// through a launcher) and Merge (the stages, tables and plots from the
// records there) — each reading the plan, none deciding what the others
// do. Run chains them as Options ask.
type Job struct {
	c       *experiments.Config // the caller's
	opt     Options
	s       *Session
	store   *results.Store
	plan    *runPlan
	sum     Summary
	started time.Time
	release func() // the output folder's lock (nil: not held)
	// prov is the provenance of every record this process writes, once
	// the run folder's config and plan are written (begin).
	prov *results.Provenance
}

// Start opens the config's sweep: unless opt.DryRun, it takes the output
// folder (its lock, unless a worker's parent holds it), then loads the
// inputs (Open), opens the store (read-only for a dry run) and plans
// every cell. Close releases what it holds.
func Start(ctx context.Context, c *experiments.Config, opt Options) (*Job, error) {
	j := &Job{c: c, opt: opt, started: time.Now(), sum: Summary{Outcome: rundir.Outcome{Out: c.Output}}}
	if err := ownOutput(c); err != nil {
		return nil, err
	}
	if err := ownCache(c); err != nil {
		return nil, err
	}
	_, statErr := os.Stat(c.Output)
	created := errors.Is(statErr, fs.ErrNotExist) && !opt.DryRun // by the writable check below
	if !opt.DryRun {
		if err := xio.CheckWritable("output", c.Output); err != nil {
			return nil, c.ErrAt(err.Error(), "output")
		}
		if !opt.Worker { // a worker's parent holds the lock for it
			release, err := lockOutput(c.Output, opt.Shards > 0)
			if err != nil {
				return nil, c.ErrAt(err.Error(), "output")
			}
			j.release = release
		}
		for _, sub := range []string{"", "tables", "plots"} {
			if _, err := xio.CleanTemps(filepath.Join(c.Output, sub)); err != nil {
				j.Close()
				return nil, fmt.Errorf("output: %w", err)
			}
		}
		if err := rundir.WriteMarker(c.Output); err != nil {
			j.Close()
			return nil, fmt.Errorf("output: %w", err)
		}
	}
	threads := runThreads(c, opt)
	if err := torchrt.SetThreads(threads); err != nil {
		// libtorch fixes its pool once parallel work has run in the
		// process; records carry the count actually used.
		j.logf("warning: %v; running with %d threads", err, torchrt.Threads())
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
		j.Close() // the lock released last, as it was taken first
		return nil, err
	}
	j.s = s
	openStore := results.OpenStore
	if opt.DryRun {
		openStore = results.ReadStore // a dry run writes nothing
	}
	if j.store, err = openStore(c.Output); err != nil {
		j.Close()
		return nil, err
	}
	if j.plan, err = newPlan(s.c, s.sums, j.store, opt.Shard, opt.Shards); err != nil {
		j.Close()
		return nil, err
	}
	p := j.plan
	j.sum.Cells, j.sum.Groups, j.sum.Reused = slices.Clone(p.cells), p.groups, p.reused
	if !opt.Worker {
		what := "to run"
		if opt.Merge {
			what = "without a record (a merge runs none)"
		}
		j.logf("%s: %d cells in %d groups, %d cached, %d %s (data %.12s, vectors %.12s)", c.File(), len(j.sum.Cells), j.sum.Groups, j.sum.Reused, len(p.todo), what, s.in.sums.Data, s.in.sums.Embedding)
	}
	for _, problem := range j.store.Problems() {
		j.logf("warning: %s", problem)
	}
	return j, nil
}

// Close frees the session and releases the output folder.
func (j *Job) Close() {
	if j.s != nil {
		j.s.Close()
		j.s = nil
	}
	if j.release != nil {
		j.release()
		j.release = nil
	}
}

// Summary is what the job did so far.
func (j *Job) Summary() Summary { return j.sum }

func (j *Job) logf(format string, args ...any) {
	if j.opt.Log != nil {
		fmt.Fprintf(j.opt.Log, format+"\n", args...)
	}
}

// Estimate is a dry run's account of the plan: what the caches lack,
// priced at the rates earlier runs on this host measured (estimate.go).
// It writes nothing.
func (j *Job) Estimate(ctx context.Context) *Estimate {
	j.sum.Estimate = newEstimator(j.s, j.plan, j.store, torchrt.Threads()).estimate(ctx, j.opt.Startup)
	return j.sum.Estimate
}

// Complete reports whether the folder holds the whole run already: every
// cell of the plan has a record and the folder holds a finished run of
// exactly these cells, with its stages' records (rundir.State.Complete).
// A run that changes nothing then writes nothing (Options.KeepComplete).
func (j *Job) Complete() bool {
	if len(j.plan.todo) > 0 || j.opt.Shards != 0 {
		return false
	}
	st, err := rundir.ReadState(j.c.Output)
	if err != nil || !st.Complete() || !slices.Equal(rundir.KeysOf(st.Plan.Cells), rundir.KeysOf(j.sum.Cells)) {
		return false
	}
	j.sum.Complete = true
	j.logf("%s: every cell and stage recorded, as its plan and manifest list them: nothing written", j.c.Output)
	return true
}

// begin writes the run folder's resolved config and plan, and the
// provenance of the records this process writes, once, before the first
// verb that writes.
func (j *Job) begin() error {
	if j.prov != nil {
		return nil
	}
	resolved, err := j.c.Resolved()
	if err != nil {
		return err
	}
	j.sum.Config = filepath.Join(j.c.Output, rundir.ResolvedName)
	if err := xio.WriteFileAtomic(j.sum.Config, resolved); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	if err := writePlan(j.c.Output, j.s.c, &j.sum); err != nil {
		return err
	}
	prov := newProvenance(j.s, resolved)
	prov.Started = j.started.UTC().Format(time.RFC3339)
	j.prov = &prov
	return nil
}

// Prepare builds what several groups of the cells to run share (see
// prepare) and writes the run folder's config and plan; it runs no cell:
// a cluster's first job.
func (j *Job) Prepare(ctx context.Context) error {
	if err := j.begin(); err != nil {
		return err
	}
	return prepare(ctx, j.s, j.plan)
}

// Execute runs the plan's cells to run: through the launcher where
// Options give one (its shards in other processes; Options.Queue: queued
// on a batch scheduler, and Execute returns with Summary.Queued), else
// one at a time in this process, each recorded as it finishes. An
// interrupted sweep returns Interrupted.
func (j *Job) Execute(ctx context.Context) error {
	if err := j.begin(); err != nil {
		return err
	}
	todo := j.plan.todo
	if l := j.opt.Launcher; l != nil && j.opt.Shards == 0 && (len(todo) > 0 || j.opt.Queue) {
		sw := &Sweep{Config: j.sum.Config, Out: j.c.Output, Groups: j.sum.Groups, Cells: j.sum.Cells, Threads: j.opt.Threads, store: j.store}
		err := l.Launch(ctx, sw)
		j.sum.Queued = err == nil && j.opt.Queue
		return interrupted(ctx, err, j.store, &j.sum)
	}
	return interrupted(ctx, execute(ctx, j.s, j.store, *j.prov, todo, j.opt, &j.sum), j.store, &j.sum)
}

// Merge reads the records there — the only truth, whoever ran the cells
// — and, unless this process is one shard of several, runs the stages
// and writes the manifest, tables and plots; cells without a record are
// reported missing.
func (j *Job) Merge(ctx context.Context) error {
	if err := j.begin(); err != nil {
		return err
	}
	if err := collect(j.store, &j.sum); err != nil {
		return err
	}
	if j.opt.Shards > 1 {
		return nil
	}
	if err := runStages(ctx, j.s, j.plan, j.store, *j.prov, &j.sum); err != nil {
		return err
	}
	w := time.Now()
	if err := writeOutputs(j.s.c, j.store, &j.sum, *j.prov, time.Since(j.started)); err != nil {
		return err
	}
	if secs := time.Since(w).Seconds(); secs > 0 && len(j.sum.Cells) > 0 {
		j.s.rates.note(outputsRate, rate{PerSec: float64(len(j.sum.Cells)) / secs})
	}
	return nil
}

// Run executes the config's sweep, chaining the Job's verbs as opt asks:
// cells with a successful record are reused, the others are run
// (privatizing through the corpus cache, training, evaluating) and
// recorded atomically one by one; a failing cell is recorded with its
// error and the sweep goes on. Unless sharded, Run then writes the
// manifest, tables and plots. c is not changed.
//
//   - DryRun: Estimate only.
//   - KeepComplete, with nothing to run: nothing, where the folder holds
//     the whole run (Job.Complete).
//   - Prepare: Prepare only; Merge: Merge only.
//   - otherwise Execute (Queue: returns once queued), then Merge.
func Run(ctx context.Context, c *experiments.Config, opt Options) (Summary, error) {
	j, err := Start(ctx, c, opt)
	if err != nil {
		return Summary{Outcome: rundir.Outcome{Out: c.Output}}, err
	}
	defer j.Close()
	switch {
	case opt.DryRun:
		j.Estimate(ctx)
		return j.Summary(), nil
	case opt.KeepComplete && !opt.Merge && !opt.Prepare && !opt.Queue && j.Complete():
		return j.Summary(), nil
	case opt.Prepare:
		err := j.Prepare(ctx)
		return j.Summary(), err
	}
	if !opt.Merge {
		if err := j.Execute(ctx); err != nil || opt.Queue {
			return j.Summary(), err
		}
	}
	err = j.Merge(ctx)
	return j.Summary(), err
}
