package runner

import (
	"context"
	"fmt"
	"strconv"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
)

// stageJob is one result of a stage: its coordinates, the records it
// reads, and how to compute it from them.
type stageJob struct {
	cell    experiments.Cell
	inputs  []results.Record
	compute func(ctx context.Context) (metrics.Analysis, error)
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

// point is a cell's coordinates without its analysis and mode: what
// stages join records on.
func point(c experiments.Cell) string {
	return c.Setting() + " ε=" + strconv.FormatFloat(c.Epsilon, 'g', -1, 64) + " seed=" + strconv.FormatUint(c.Seed, 10)
}

// stageCells are the utility cells stages decided on (matched-privacy's
// at the ε found), with how many models running them trained.
type stageCells struct {
	Cells   []rundir.CellStatus
	Trained int
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
