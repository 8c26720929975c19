package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
)

// PlanName is the file of a run folder that lists the run's cells: each
// cell's record key and group, with the resolved config. Every run that
// runs cells writes it before the first one (each shard writes the same
// bytes), so that a partial or sharded run can be read, resumed and
// re-submitted without a manifest.
const PlanName = "plan.json"

// Plan is the content of plan.json.
type Plan struct {
	Config experiments.Config `json:"config"` // resolved
	Groups int                `json:"groups"`
	Cells  []CellStatus       `json:"cells"` // Status empty
}

func writePlan(out string, c *experiments.Config, sum *Summary) error {
	p := Plan{Config: *c, Groups: sum.Groups, Cells: slices.Clone(sum.Cells)}
	for i := range p.Cells {
		p.Cells[i].Status, p.Cells[i].Error = "", ""
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := xio.WriteFileAtomic(filepath.Join(out, PlanName), append(b, '\n')); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}

// State is what a run folder holds: its plan, and for each cell whether
// its record is there (ok), there and failed, or missing; the results of
// stages are those of the last finished run (manifest.json) when its
// cells are the plan's.
type State struct {
	Dir    string
	Plan   Plan
	Cells  []CellStatus // Status: ok, failed or missing
	Stages []CellStatus
	// Ok, Failed and Missing count the cells.
	Ok, Failed, Missing int
	// Manifest is the last finished run's manifest (nil: none yet).
	Manifest *Manifest

	store   *results.Store
	records []results.Record // the cells' records there, in plan order
}

// ReadState reads a run folder: plan.json (or, for runs written before
// it existed, the manifest's cell list) and the records of the cells.
func ReadState(dir string) (*State, error) {
	st := &State{Dir: dir}
	if b, err := os.ReadFile(filepath.Join(dir, "manifest.json")); err == nil {
		var m Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "manifest.json"), err)
		}
		st.Manifest = &m
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	switch b, err := os.ReadFile(filepath.Join(dir, PlanName)); {
	case err == nil:
		if err := json.Unmarshal(b, &st.Plan); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, PlanName), err)
		}
	case errors.Is(err, fs.ErrNotExist) && st.Manifest != nil:
		st.Plan = Plan{Config: st.Manifest.Provenance.Resolved, Cells: st.Manifest.Summary.Cells}
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: not a run folder (no %s: xp run or xp slurm writes it when a run starts)", dir, PlanName)
	default:
		return nil, err
	}
	store, err := results.ReadStore(dir)
	if err != nil {
		return nil, err
	}
	st.store = store
	for _, cs := range st.Plan.Cells {
		r, ok, err := st.store.Get(cs.Key)
		if err != nil {
			return nil, err
		}
		if ok {
			st.records = append(st.records, r)
		}
		switch cs.Status, cs.Error = statusOf(r, ok); cs.Status {
		case "missing":
			st.Missing++
		case "ok":
			st.Ok++
		default:
			st.Failed++
		}
		st.Cells = append(st.Cells, cs)
	}
	if m := st.Manifest; m != nil && slices.Equal(m.Summary.Keys(), keysOf(st.Plan.Cells)) {
		st.Stages = m.Summary.Stages
	}
	return st, nil
}

// statusOf is a cell's status from what the store holds for it (r, ok
// from Store.Get): ok, failed (with the record's error) or missing.
func statusOf(r results.Record, ok bool) (status, msg string) {
	switch {
	case !ok:
		return "missing", "no record: not run yet, or its process stopped before recording it"
	case r.Status == "ok":
		return "ok", ""
	}
	return "failed", r.Error
}

func keysOf(cells []CellStatus) []string {
	keys := make([]string, len(cells))
	for i, cs := range cells {
		keys[i] = cs.Key
	}
	return keys
}

// Records returns the records of the run's cells and stages that are
// there, in plan order.
func (st *State) Records() ([]results.Record, error) {
	stages, err := st.store.Records(keysOf(st.Stages))
	if err != nil {
		return nil, err
	}
	return append(slices.Clone(st.records), stages...), nil
}

// Unfinished returns the shards of n whose groups hold a cell without a
// successful record: the tasks to submit again.
func (st *State) Unfinished(n int) []int {
	return shardsOf(st.Cells, n, func(cs CellStatus) bool { return cs.Status != "ok" })
}

// shardsOf returns the shards of n whose groups hold a picked cell.
func shardsOf(cells []CellStatus, n int, pick func(CellStatus) bool) []int {
	var out []int
	for _, cs := range cells {
		if pick(cs) {
			out = append(out, experiments.Shard(cs.Group, n))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// prepare builds once what several groups of the todo cells share, so
// that shards starting together do not build it each: every mechanism
// setting's precomputations (the candidate space, cached mappings), and
// the privatized test splits that cells of different groups read (modes
// test and both of one setting, ε and seed). The embedding cache was
// built when the session opened.
func prepare(ctx context.Context, s *Session, sum *Summary, todo []int) error {
	built := map[string]bool{}
	groups := map[string]map[int]bool{}
	for _, i := range todo {
		cell := sum.Cells[i].Cell
		if cell.Mechanism == "" || cell.Analysis != "" {
			continue
		}
		if k := cell.Stream(); !built[k] {
			built[k] = true
			if _, _, err := s.mechanism(cell, s.progress); err != nil {
				return fmt.Errorf("prepare %s: %w", cell, err)
			}
		}
		if cell.Privatizes("test") {
			k := s.c.CorpusKey(cell, "test", s.in.sums)
			if groups[k] == nil {
				groups[k] = map[int]bool{}
			}
			groups[k][sum.Cells[i].Group] = true
		}
	}
	done := map[string]bool{}
	for _, i := range todo {
		cell := sum.Cells[i].Cell
		if !cell.Privatizes("test") || cell.Analysis != "" {
			continue
		}
		k := s.c.CorpusKey(cell, "test", s.in.sums)
		if len(groups[k]) < 2 || done[k] {
			continue
		}
		done[k] = true
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := s.Split(ctx, cell, "test", s.progress); err != nil {
			return fmt.Errorf("prepare %s: %w", cell, err)
		}
		s.logf("prepared the privatized test split of %s (shared by %d groups)", cell, len(groups[k]))
	}
	return nil
}
