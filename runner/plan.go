package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
)

// The run folder's files and what they hold are package rundir's: the
// runner writes them, rundir reads them (without libtorch).
const (
	PlanName     = rundir.PlanName
	ResolvedName = rundir.ResolvedName
)

type (
	Plan       = rundir.Plan
	State      = rundir.State
	CellStatus = rundir.CellStatus
)

// ReadState reads a run folder (see rundir.ReadState).
func ReadState(dir string) (*State, error) { return rundir.ReadState(dir) }

// ReadTables reads the last run in dir (see rundir.ReadTables).
func ReadTables(dir string) (*State, []results.Row, []results.StatRow, error) {
	return rundir.ReadTables(dir)
}

// TableOptions are how the config's tables are judged (see
// rundir.TableOptions).
func TableOptions(c *experiments.Config) results.TableOptions { return rundir.TableOptions(c) }

func keysOf(cells []CellStatus) []string { return rundir.KeysOf(cells) }

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
