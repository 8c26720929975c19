package runner

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/torchrt"
)

// stageJob is one result of a stage: its coordinates, the records it
// reads, and how to compute it from them.
type stageJob struct {
	cell    experiments.Cell
	inputs  []results.Record
	compute func(ctx context.Context) (metrics.Analysis, error)
}

// runStages runs the config's stages in order after its cells. Each
// stage reads the run's cell records and the results of the stages
// before it; each result is a record keyed by the stage, its parameters,
// its coordinates and the keys of the records it read, so it is reused
// until one of them changes. A result whose inputs failed is recorded as
// failed; one whose inputs are missing is left out (say so in the log).
func runStages(ctx context.Context, s *Session, p *runPlan, store *results.Store, prov results.Provenance, sum *Summary) error {
	c := s.c
	if len(c.Stages) == 0 {
		return nil
	}
	cells, err := store.Records(rundir.KeysOf(p.cells))
	if err != nil {
		return err
	}
	// A record's cell comes back from JSON with its parameters as float64
	// (k: 50.0), which the mechanism's descriptor refuses for an integer;
	// stages build mechanisms from cells, so they take the planned cell
	// (the config's types; the same JSON, so the same keys).
	planned := make(map[string]experiments.Cell, len(p.cells))
	for _, cs := range p.cells {
		planned[cs.Key] = cs.Cell
	}
	byKey := make(map[string]results.Record, len(cells))
	for k := range cells {
		if c, ok := planned[cells[k].Key]; ok {
			cells[k].Cell = c
		}
		byKey[cells[k].Key] = cells[k]
	}
	var done []results.Record
	var ran stageCells
	defer func() { // what ran is counted even when a later stage fails
		sum.StageCells = ran.Cells
		sum.Trained += ran.Trained
	}()
	for i, st := range c.Stages {
		kind, ok := stageKindOf(st.Kind)
		if !ok {
			return fmt.Errorf("stage %s is described in spec but not run by the runner", st.Kind)
		}
		jobs := kind.jobs(s, stageInputs{c: c, i: i, cells: cells, plan: p, byKey: byKey, done: done, store: store, prov: prov, ran: &ran})
		for _, j := range jobs {
			if err := ctx.Err(); err != nil {
				return err
			}
			keys := make([]string, len(j.inputs))
			for k, r := range j.inputs {
				keys[k] = r.Key
			}
			cs := rundir.CellStatus{Key: c.StageKey(i, j.cell, keys), Cell: j.cell}
			rec, ok, err := store.Get(cs.Key)
			if err != nil {
				return err
			}
			if ok && rec.Status == "ok" {
				cs.Status = "cached"
				for _, k := range rec.Ran { // its cells outside the plan stay the run's
					r, has, err := store.Get(k)
					if err != nil {
						return err
					}
					if has {
						ran.Cells = append(ran.Cells, rundir.CellStatus{Key: k, Cell: r.Cell, Status: "cached", Stage: st.Kind})
					}
				}
			} else {
				before := len(ran.Cells)
				rec = s.runStage(ctx, cs, keys, j, prov)
				rec.Ran = rundir.KeysOf(ran.Cells[before:])
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err := store.Put(rec); err != nil {
					return err
				}
				if key, units := s.stageWork(i, j.cell); units > 0 && rec.Status == "ok" && rec.Provenance.WallSeconds > 0 {
					s.rates.note(key, rate{PerSec: float64(units) / rec.Provenance.WallSeconds})
				}
				cs.Status, cs.Error = rec.Status, rec.Error
				s.logf("%s: %s", j.cell, outcome(rec))
			}
			done = append(done, rec)
			sum.Stages = append(sum.Stages, cs)
		}
	}
	return nil
}

// stageInputs is what a stage's jobs are planned from: the config and
// the stage's index, the run's cell records (in the plan's order, and by
// key), the plan, the results of the stages before it, and the store and
// provenance for the cells a stage runs itself.
type stageInputs struct {
	c     *experiments.Config
	i     int
	cells []results.Record
	byKey map[string]results.Record
	plan  *runPlan
	done  []results.Record
	store *results.Store
	prov  results.Provenance
	ran   *stageCells // the cells outside the plan that stages ran or reused
}

// stageCells are the utility cells stages decided on (matched-privacy's
// at the ε found), with how many models running them trained.
type stageCells struct {
	Cells   []rundir.CellStatus
	Trained int
}

// stageKind is one kind of stage as the runner runs it, declared once in
// its own file (stage_*.go): the jobs it plans from the records, each job
// a result; and, for a stage that searches (its results cost more than
// combining records), one result's work and how the dry run prices it.
type stageKind struct {
	name string
	jobs func(s *Session, in stageInputs) []stageJob
	// work is one result's cost for the group of cell's mechanism setting
	// and seed, in the units its rate is measured in (nil: the stage
	// combines records, which costs nothing worth pricing); lookups says
	// that those units are draws, counted in the estimate's StageLookups.
	work    func(s *Session, i int, cell experiments.Cell) int64
	lookups bool
	// price adds one result's work where no earlier result of the stage
	// measured its rate.
	price func(x *estimator, g stageGroup)
	// baseline: a result reads the seed's baseline beside its group.
	baseline bool
}

// stageKinds are the stages the runner runs, one per descriptor of spec
// (TestEveryStageRun).
var stageKinds = []stageKind{utilityLossStage, selectStage, searchStage, matchedStage}

// stageKindOf is the named stage's kind.
func stageKindOf(name string) (stageKind, bool) {
	for _, k := range stageKinds {
		if k.name == name {
			return k, true
		}
	}
	return stageKind{}, false
}

// runStage computes one stage result, failing it when an input failed.
func (s *Session) runStage(ctx context.Context, cs rundir.CellStatus, keys []string, j stageJob, prov results.Provenance) results.Record {
	start := time.Now()
	rec := results.Record{Key: cs.Key, Cell: j.cell, Notion: j.cell.Notion(), Status: "ok", Inputs: keys, Provenance: prov}
	rec.Provenance.Started = start.UTC().Format(time.RFC3339)
	for _, in := range j.inputs {
		if in.Status != "ok" {
			rec.Status, rec.Error = "failed", fmt.Sprintf("input %s failed: %s", in.Cell, in.Error)
			return rec
		}
	}
	a, err := j.compute(ctx)
	if err != nil {
		rec.Status, rec.Error = "failed", oneLine(s.c.Output, cs.Key, err)
	} else {
		rec.Analysis = &a
	}
	rec.Provenance.WallSeconds = time.Since(start).Seconds()
	rec.Provenance.PeakRSSBytes, _ = torchrt.PeakResidentBytes()
	return rec
}

// point is a cell's coordinates without its analysis and mode: what
// stages join records on.
func point(c experiments.Cell) string {
	return c.Setting() + " ε=" + strconv.FormatFloat(c.Epsilon, 'g', -1, 64) + " seed=" + strconv.FormatUint(c.Seed, 10)
}

// runRecorded returns cell's record from the store, running and
// recording it first when the store has no finished one: a cell that a
// stage decides on, outside the run's plan, listed in the run's summary
// (StageCells) so that cells.csv shows it and the models it trains are
// counted. A failed cell is an error.
func (s *Session) runRecorded(ctx context.Context, in stageInputs, cell experiments.Cell) (results.Record, error) {
	store := in.store
	key := s.Key(cell)
	rec, ok, err := store.Get(key)
	if err != nil {
		return rec, err
	}
	cs := rundir.CellStatus{Key: key, Cell: cell, Status: "cached", Stage: in.c.Stages[in.i].Kind}
	defer func() { in.ran.Cells = append(in.ran.Cells, cs) }()
	if !ok || rec.Status != "ok" {
		if rec, err = s.record(ctx, store, key, cell, in.prov, s.progress); err != nil {
			return rec, err
		}
		cs.Status, cs.Error = rundir.StatusOf(rec, true)
		if rec.Status == "ok" && rec.Model != "" && !rec.Provenance.ModelReused {
			in.ran.Trained++
		}
	}
	if rec.Status != "ok" {
		return rec, fmt.Errorf("%s: %s", cell, rec.Error)
	}
	return rec, nil
}

// groups are the plan's groups of analysis's cells by mechanism setting
// and seed (runPlan.settingSeed) as the records the store has: a cell
// without one is left out of its group, a group without any dropped.
func (in stageInputs) groups(analysis string) settingSeedGroups[results.Record] {
	g := in.plan.settingSeed(analysis)
	out := settingSeedGroups[results.Record]{baseline: map[uint64]results.Record{}}
	for _, idx := range g.groups {
		var recs []results.Record
		for _, i := range idx {
			if r, ok := in.byKey[in.plan.cells[i].Key]; ok {
				recs = append(recs, r)
			}
		}
		if len(recs) > 0 {
			out.groups = append(out.groups, recs)
		}
	}
	for seed, i := range g.baseline {
		if r, ok := in.byKey[in.plan.cells[i].Key]; ok {
			out.baseline[seed] = r
		}
	}
	return out
}

// settingSeedGroups groups the items whose cell is of the named analysis
// by mechanism setting and seed, in the order first seen — the unit of a
// searching stage's results, of its price and of its jobs alike — and
// keeps each seed's baseline (the utility cell of mode none).
type settingSeedGroups[T any] struct {
	groups   [][]T
	baseline map[uint64]T
}

func groupBySettingSeed[T any](items []T, cellOf func(T) experiments.Cell, analysis string) settingSeedGroups[T] {
	out := settingSeedGroups[T]{baseline: map[uint64]T{}}
	at := map[string]int{}
	for _, it := range items {
		cell := cellOf(it)
		switch {
		case cell.Analysis == "" && cell.Mode == "none":
			out.baseline[cell.Seed] = it
		case cell.Analysis == analysis && cell.Mechanism != "":
			g := cell.Setting() + " seed=" + strconv.FormatUint(cell.Seed, 10)
			i, ok := at[g]
			if !ok {
				i = len(out.groups)
				at[g] = i
				out.groups = append(out.groups, nil)
			}
			out.groups[i] = append(out.groups[i], it)
		}
	}
	return out
}
