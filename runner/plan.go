package runner

import (
	"context"
	"fmt"
	"strconv"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
)

// The run folder's files and what they hold are package rundir's: the
// runner writes them, rundir reads them (without libtorch), and readers
// of run folders use rundir.

// runPlan is what a run will do, computed once before any cell runs and
// only read after — by the estimate, the sweep, its stages and its
// outputs: every cell of the config with its key, group and status
// (cached: a successful record exists; other-shard; or todo), the
// indices of the todo cells in sweep order, and the config's analysis
// cells grouped by mechanism setting and seed, the unit of a searching
// stage's results, of its jobs and of its price.
type runPlan struct {
	cells  []rundir.CellStatus
	groups int // the number of groups (CellStatus.Group)
	reused int // cells cached
	todo   []int
	// analysis is the config's analysis kind and bySettingSeed its cells
	// (indices into cells) grouped by setting and seed, with each seed's
	// baseline.
	analysis      string
	bySettingSeed settingSeedGroups[int]
}

// newPlan plans the config's cells from the config, the checksums of the
// inputs each cell reads (sums: what keys it) and the records in the
// store; with shards > 1, the cells of other shards than shard are not
// this process's to run.
func newPlan(c *experiments.Config, sums func(experiments.Cell) experiments.Inputs, store *results.Store, shard, shards int) (*runPlan, error) {
	cells := c.Cells()
	groupKeys := make([]string, len(cells))
	for i, cell := range cells {
		groupKeys[i] = c.GroupKey(cell, sums(cell))
	}
	groups, n := experiments.Groups(groupKeys)
	p := &runPlan{groups: n, analysis: c.Analysis.Kind}
	for i, cell := range cells {
		cs := rundir.CellStatus{Key: c.Key(cell, sums(cell)), Cell: cell, Group: groups[i], Status: "todo"}
		switch done, err := store.Done(cs.Key); {
		case err != nil:
			return nil, err
		case done:
			cs.Status = "cached"
			p.reused++
		case shards > 1 && experiments.Shard(cs.Group, shards) != shard:
			cs.Status = "other-shard"
		default:
			p.todo = append(p.todo, i)
		}
		p.cells = append(p.cells, cs)
	}
	idx := make([]int, len(p.cells))
	for i := range idx {
		idx[i] = i
	}
	p.bySettingSeed = groupBySettingSeed(idx, func(i int) experiments.Cell { return p.cells[i].Cell }, p.analysis)
	return p, nil
}

// settingSeed are the plan's groups of analysis's cells by mechanism
// setting and seed, with the seeds' baselines (none where the config's
// analysis is another).
func (p *runPlan) settingSeed(analysis string) settingSeedGroups[int] {
	if analysis != p.analysis {
		return settingSeedGroups[int]{}
	}
	return p.bySettingSeed
}

// prepare builds once what several groups of the todo cells share, so
// that shards starting together do not build it each: every mechanism
// setting's precomputations (the candidate space, cached mappings), and
// the privatized test splits that cells of different groups read (modes
// test and both of one setting, ε and seed). The embedding cache was
// built when the session opened.
func prepare(ctx context.Context, s *Session, p *runPlan) error {
	built := map[string]bool{}
	groups := map[string]map[int]bool{}
	for _, i := range p.todo {
		cell := p.cells[i].Cell
		if cell.Mechanism == "" || cell.Analysis != "" {
			continue
		}
		if k := cell.Stream(); !built[k] {
			built[k] = true
			if _, _, err := s.priv.mechanism(cell, s.progress); err != nil {
				return fmt.Errorf("prepare %s: %w", cell, err)
			}
		}
		if cell.Privatizes("test") {
			k := s.c.CorpusKey(cell, "test", s.in.sums)
			if groups[k] == nil {
				groups[k] = map[int]bool{}
			}
			groups[k][p.cells[i].Group] = true
		}
	}
	done := map[string]bool{}
	for _, i := range p.todo {
		cell := p.cells[i].Cell
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
