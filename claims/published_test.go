package claims

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/rundir"
)

// TestPublished: configs/published.yaml parses; every config of
// configs/paper has a run and every run a claim; each run's config loads
// with its overrides; and each claim's points name cells their run has —
// an analysis and setting (at that ε when the point gives one), a
// utility row's setting and mode, or a stage's result.
func TestPublished(t *testing.T) {
	f, err := Read("../configs/published.yaml")
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob("../configs/paper/*.yaml")
	for _, p := range paths {
		if !slices.ContainsFunc(f.Runs, func(r Run) bool { return r.Config == "paper/"+filepath.Base(p) }) {
			t.Errorf("%s has no run in configs/published.yaml", p)
		}
	}
	read := map[string]bool{}
	for _, c := range f.Claims {
		for _, g := range c.groups() {
			for _, p := range g {
				read[cmpOr(p.Run, c.Run)] = true
			}
		}
	}
	cells := map[string][]experiments.Cell{}
	for _, r := range f.Runs {
		if !read[r.Name] {
			t.Errorf("published.yaml:%d: no claim reads run %s", r.Line(), r.Name)
		}
		c, err := experiments.Load(f.ConfigPath(r), experiments.Options{Set: r.Set})
		if err != nil {
			t.Errorf("published.yaml:%d: run %s: %v", r.Line(), r.Name, err)
			continue
		}
		cs := c.Cells()
		for _, st := range c.Stages {
			for _, m := range c.Mechanisms {
				cs = append(cs, experiments.Cell{Analysis: st.Kind, Mechanism: m.Name})
			}
		}
		cells[r.Name] = cs
	}
	for _, cl := range f.Claims {
		for _, g := range cl.groups() {
			for _, p := range g {
				run := cmpOr(p.Run, cl.Run)
				eps := append([]float64{p.Epsilon}, p.Epsilons...)
				if p.Epsilon == 0 {
					eps = p.Epsilons
				}
				found := slices.ContainsFunc(cells[run], func(cell experiments.Cell) bool {
					mode := cell.Mode
					if cell.Analysis != "" {
						mode = ""
					}
					setting := cell.Setting()
					stage := cell.Analysis == "select" || cell.Analysis == "epsilon-search"
					if stage {
						setting = cell.Mechanism // a stage's result: one per mechanism (and setting)
					}
					return cell.Analysis == p.Analysis && mode == p.Mode && (setting == p.Setting || (cell.Analysis == "epsilon-search" && strings.HasPrefix(cell.Setting(), p.Setting))) &&
						(stage || len(eps) == 0 || slices.Contains(eps, cell.Epsilon))
				})
				if !found {
					t.Errorf("published.yaml:%d: run %s has no cell %s", cl.Line(), run, p)
				}
			}
		}
	}
}

// TestRecordsKept: every folder under records/paper is a run of
// configs/published.yaml, and every record it keeps belongs to a cell or
// stage of its plan (a record a re-planned run no longer reads is stale
// and is removed, not kept).
func TestRecordsKept(t *testing.T) {
	f, err := Read("../configs/published.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(filepath.Join("..", "records", "paper"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, ok := f.Run(d.Name()); !ok {
			t.Errorf("records/paper/%s is no run of configs/published.yaml", d.Name())
			continue
		}
		st, err := rundir.ReadState(f.Dir(d.Name()))
		if err != nil {
			t.Errorf("records/paper/%s: %v", d.Name(), err)
			continue
		}
		stale, err := st.Stale()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range stale {
			t.Errorf("%s: a record of no cell of the run's plan (xp paper run removes it)", p)
		}
	}
}
