package claims

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/datasets/catalog"
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

// TestNeedsCheckpoint: the CusText conclusions on accuracy read the runs
// that fine-tune bert-base-uncased as the paper does; without records of
// them (the checkpoint is the user's to bring) they read "needs the
// checkpoint" — never decided by the biLSTM, whose runs are declared
// variants with claims of kind variant — and a run without a checkpoint
// and without records still reads "not run here".
func TestNeedsCheckpoint(t *testing.T) {
	f, err := Read("../configs/published.yaml")
	if err != nil {
		t.Fatal(err)
	}
	as, err := f.Decide()
	if err != nil {
		t.Fatal(err)
	}
	needs := 0
	for _, a := range as {
		bert := slices.ContainsFunc(a.Runs, func(r string) bool { return f.Checkpoint(r) != "" })
		switch {
		case bert && a.Claim.Kind != Conclusion:
			t.Errorf("published.yaml:%d: a %s reads a BERT run", a.Claim.Line(), a.Claim.Kind)
		case bert && a.Verdict != NeedsCheckpoint && !hasRecords(f, a.Runs):
			t.Errorf("published.yaml:%d: %s without records of %v", a.Claim.Line(), a.Verdict, a.Runs)
		case a.Verdict == NeedsCheckpoint:
			needs++
		}
		if a.Claim.Kind == Conclusion && a.Claim.Stat == "accuracy" && a.Claim.Paper == "chen2023" && !bert {
			t.Errorf("published.yaml:%d: a CusText conclusion on accuracy decided without the paper's BERT (%v)", a.Claim.Line(), a.Runs)
		}
		for _, r := range a.Runs {
			if run, _ := f.Run(r); strings.Contains(run.Variant, "biLSTM") && a.Claim.Kind == Conclusion && a.Claim.Stat == "accuracy" {
				t.Errorf("published.yaml:%d: a conclusion on accuracy reads the biLSTM variant %s", a.Claim.Line(), r)
			}
		}
	}
	if needs == 0 && !hasRecords(f, []string{"custext-table1-sst2-bert"}) {
		t.Error("no claim reads needs the checkpoint")
	}
	// Every checkpoint a run fine-tunes is one the catalog knows (xp data
	// list shows whether it is there; xp data get fetches it).
	for _, r := range f.Runs {
		if ck := f.Checkpoint(r.Name); ck != "" {
			if _, ok := catalog.CheckpointAt(ck); ok {
				continue
			}
			t.Errorf("run %s fine-tunes %s, which the catalog does not list", r.Name, ck)
		}
	}
	if f.Checkpoint("custext-table1-sst2-bert") != "checkpoints/bert-base-uncased" || f.Checkpoint("custext-table1-sst2") != "" {
		t.Errorf("checkpoints: %q and %q", f.Checkpoint("custext-table1-sst2-bert"), f.Checkpoint("custext-table1-sst2"))
	}
}

func hasRecords(f *File, runs []string) bool {
	for _, r := range runs {
		if _, err := os.Stat(filepath.Join(f.Dir(r), "plan.json")); err != nil {
			return false
		}
	}
	return true
}
