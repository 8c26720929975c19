package analysis

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/mech/mechtest"
)

// TestReconstructionUsesContext: each content word is fixed by the
// stopword before it ("the" → w0, "of" → w1, …). 1-Diffractor keeps
// stopwords and, at ε = 0.01, sends content words almost anywhere on its
// line, so an attacker reading one observed word at a time recovers the
// stopwords and little else, while the tagger reads the stopword before
// it and recovers nearly every token.
func TestReconstructionUsesContext(t *testing.T) {
	stops := []string{"the", "of", "in", "a"}
	e := &embedding.Embedding{Dim: 4, Format: "test", Source: "context"}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 24 {
		w := "w" + strconv.Itoa(i-4)
		if i < 4 {
			w = stops[i]
		}
		e.Words = append(e.Words, w)
		for range 4 {
			e.Data = append(e.Data, float32(r.NormFloat64()))
		}
	}
	s := mechtest.Space(t, e)
	var texts [][]string
	counts := map[string]int64{}
	for range 700 {
		var d []string
		for range 3 {
			k := r.IntN(4)
			d = append(d, stops[k], "w"+strconv.Itoa(k))
		}
		for _, w := range d {
			counts[w]++
		}
		texts = append(texts, d)
	}
	m, err := mech.New("diffractor", s, 0.01, nil, mech.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Run(context.Background(), "reconstruction", map[string]any{"sentences": 600, "test": 100, "epochs": 12, "hidden": 16, "lr": 0.02},
		Env{Space: s, Mech: m, Source: mech.Source{Seed: 1, Cell: "rec"}, Texts: texts, Counts: counts, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rec, free, tokens := a.Stat("recovery %"), a.Stat("context-free recovery %"), a.Stat("tokens")
	if tokens != 600 || rec < 95 || free > 80 {
		t.Errorf("%v tokens: recovery %.1f%% with context, %.1f%% without (want ≥ 95 and ≤ 80); %v", tokens, rec, free, a.Stats)
	}
	// The context-free attacker alone, as the matched-privacy stage
	// searches on it: the same pairs, the same share.
	alone, _, err := ContextFreeRecovery(context.Background(), map[string]any{"sentences": 600, "test": 100},
		Env{Space: s, Mech: m, Source: mech.Source{Seed: 1, Cell: "rec"}, Texts: texts, Counts: counts, Seed: 1})
	if err != nil || alone.ContextFree != free || alone.Copy != a.Stat("unchanged %") {
		t.Errorf("context-free recovery alone %v (%v), in the analysis %v", alone, err, free)
	}
	// Half the tokens are kept stopwords, which both recover.
	if u := a.Stat("unchanged %"); u < 50 || free < 50 {
		t.Errorf("unchanged %.1f%%, context-free %.1f%%: the stopwords alone are half", u, free)
	}
}
