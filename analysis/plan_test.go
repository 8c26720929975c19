package analysis

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/mech/mechtest"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// TestPlanMatchesLookups: for every analysis spec describes, Plan picks
// the rows the analysis itself takes: a sampled cell (Laplace) records
// exactly Rows × Draws lookups; and the statistics its descriptor names
// for figures (Figures, Tradeoffs, Histograms) are ones it computes. An
// analysis without a plan fails.
func TestPlanMatchesLookups(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	e := &embedding.Embedding{Dim: 4, Format: "test", Source: "plan"}
	counts := map[string]int64{}
	for i := range 40 {
		w := "w" + strconv.Itoa(i)
		e.Words = append(e.Words, w)
		for range 4 {
			e.Data = append(e.Data, float32(r.NormFloat64()))
		}
		if i%4 != 3 {
			counts[w] = int64(1 + r.IntN(50))
		}
	}
	counts["novector"] = 7
	labels := map[string]int{"w0": 1, "w1": -1, "w2": 1, "w4": -1, "w5": 1}
	s := mechtest.Space(t, e)
	lap, err := mech.New("laplace", s, 5, nil, mech.Options{})
	if err != nil {
		t.Fatal(err)
	}
	list := []string{"w1", "w5", "w9"}
	cases := map[string]map[string]any{
		"neighbours":            {"words": 12, "k": []int{1, 5}},
		"plausible-deniability": {"words": 9, "draws": 30},
		"bayes-adversary":       {"samples": 20, "top": 25},
		"query-attack":          {"list": list, "samples": 50, "cap": 20},
		"examples":              {"list": list, "draws": 7},
		"dp-audit":              {"from": "dataset", "words": 6, "draws": 40},
		"mapping":               nil, // CusText only: exact, no lookups
		"reconstruction":        nil, // texts, not draws: too slow to run here
	}
	for _, name := range spec.Names(spec.Analysis) {
		raw, ok := cases[name]
		if !ok {
			t.Errorf("analysis %s has no case here", name)
			continue
		}
		env := Env{Space: s, Counts: counts, Labels: labels, Seed: 3, Mech: lap, Source: mech.Source{Seed: 3, Cell: "plan"}}
		w, err := Plan(name, raw, env)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		switch name {
		case "mapping":
			if w.Rows != len(datasetRows(env)) {
				t.Errorf("mapping: %d rows planned, %d dataset words with a vector", w.Rows, len(datasetRows(env)))
			}
			continue
		case "reconstruction":
			if w.Rows != 5000 || w.Draws != 1 {
				t.Errorf("reconstruction: %+v, want its 4,000 + 1,000 texts", w)
			}
			continue
		}
		a, err := Run(context.Background(), name, raw, env)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if a.Lookups != w.Units(true) || a.Lookups == 0 {
			t.Errorf("%s: %d lookups, planned %+v = %d", name, a.Lookups, w, w.Units(true))
		}
		d, _ := spec.Lookup(spec.Analysis, name)
		drawn := slices.Clone(d.Figures)
		for _, xy := range d.Tradeoffs {
			drawn = append(drawn, xy[0], xy[1])
		}
		for _, stat := range drawn {
			if !slices.ContainsFunc(a.Stats, func(st metrics.Stat) bool { return st.Name == stat }) {
				t.Errorf("%s: its figures draw %q, which it does not compute", name, stat)
			}
		}
		for _, series := range d.Histograms {
			if _, ok := a.Series[series]; !ok {
				t.Errorf("%s: its histograms draw the series %q, which it does not compute", name, series)
			}
		}
	}
}
