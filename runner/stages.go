package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/torchrt"
)

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

// stageWork is what one result of stage i for cell's mechanism setting
// costs, in the units its rate is measured in (the kind's work), and the
// rate's name. A finished result records the rate (runStages), so the
// next estimate of the same stage prices what it measured.
func (s *Session) stageWork(i int, cell experiments.Cell) (key string, units int64) {
	kind, ok := stageKindOf(s.c.Stages[i].Kind)
	if !ok || kind.work == nil {
		return "", 0
	}
	return "stage " + kind.name + " " + cell.Mechanism + s.rates.shape(), kind.work(s, i, cell)
}
