package mech

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/xp-nlp/xp/mech/knn"
)

func allCounts(s *Space) map[string]int64 {
	c := map[string]int64{}
	for i, w := range s.Emb.Words {
		c[w] = int64(1000 - i)
	}
	return c
}

func TestCusTextMappings(t *testing.T) {
	s := tinySpace(t, 120, 4, 8, 1)
	counts := allCounts(s)
	for _, mode := range []string{"aggressive", "balanced", "conservative"} {
		m, err := NewCusText(s, 1, CusTextParams{K: 5, Mapping: mode, Score: "euclidean"}, counts)
		if err != nil {
			t.Fatal(err)
		}
		mp := m.Mapping()
		seen := map[int32]int{}
		for x, si := range mp.Of {
			set := mp.Sets[si]
			if len(set) != 5 || !slices.Contains(set, x) {
				t.Fatalf("%s: set of %d is %v", mode, x, set)
			}
		}
		for si, set := range mp.Sets {
			for _, y := range set {
				if prev, dup := seen[y]; dup && mode == "conservative" {
					t.Fatalf("conservative sets %d and %d share %d", prev, si, y)
				}
				seen[y] = si
			}
		}
		switch mode {
		case "aggressive":
			for _, x := range mp.Order {
				want, _ := knn.Naive(s.Emb.Data, s.Emb.Len(), s.Emb.Dim, s.Emb.Vector(int(x)), 5)
				if !slices.Equal(mp.Sets[mp.Of[x]], want) {
					t.Fatalf("aggressive: set of %d is %v, want its 5 nearest %v", x, mp.Sets[mp.Of[x]], want)
				}
			}
		case "balanced":
			if len(mp.Sets) >= len(mp.Order) {
				t.Errorf("balanced built %d sets for %d words: sets are not shared", len(mp.Sets), len(mp.Order))
			}
		}
		t.Logf("%s: %d sets for %d words", mode, len(mp.Sets), len(mp.Order))
	}
}

// TestCusTextExactSetDP: among inputs sharing an output set the exact
// probabilities satisfy pure ε-DP, and the best output has the largest
// probability.
func TestCusTextExactSetDP(t *testing.T) {
	s := tinySpace(t, 80, 3, 9, 1)
	for _, score := range []string{"euclidean", "cosine"} {
		m, err := NewCusText(s, 2, CusTextParams{K: 8, Mapping: "balanced", Score: score}, allCounts(s))
		if err != nil {
			t.Fatal(err)
		}
		mp := m.Mapping()
		members := map[int32][]int32{}
		for x, si := range mp.Of {
			if _, ok := m.probs[x]; ok {
				members[si] = append(members[si], x)
			}
		}
		for _, xs := range members {
			for _, a := range xs {
				for _, b := range xs {
					pa, pb := m.probs[a], m.probs[b]
					for y := range pa {
						if pa[y] > math.Exp(m.eps)*pb[y]*(1+1e-12) {
							t.Fatalf("%s: Pr[%d→%d]=%g > e^ε·Pr[%d→%d]=%g", score, a, y, pa[y], b, y, pb[y])
						}
					}
				}
			}
		}
		// Sampling matches the exact distribution.
		word := s.Emb.Words[mp.Order[0]]
		set, p, _ := m.Probabilities(word)
		const N = 30000
		out, _, err := m.Privatize(context.Background(), repeatDocs(word, N), Source{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		for j, y := range set {
			var c float64
			for _, o := range out[0] {
				if o == y {
					c++
				}
			}
			if math.Abs(c/N-p[j]) > 4.5*math.Sqrt(p[j]*(1-p[j])/N)+1e-4 {
				t.Errorf("%s: %s sampled %.4f, exact %.4f", score, y, c/N, p[j])
			}
		}
	}
}

func TestCusTextStrategies(t *testing.T) {
	s := tinySpace(t, 60, 3, 10, 1)
	counts := allCounts(s)
	w := s.Emb.Words[1]
	docs := [][]string{repeatDocs(w, 50)[0], repeatDocs(w, 50)[0]}
	distinct := func(strategy string) (perDoc []int, overall int) {
		m, err := NewCusText(s, 0.1, CusTextParams{K: 10, Strategy: strategy}, counts)
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := m.Privatize(context.Background(), docs, Source{Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		all := map[string]bool{}
		for _, d := range out {
			one := map[string]bool{}
			for _, o := range d {
				one[o], all[o] = true, true
			}
			perDoc = append(perDoc, len(one))
		}
		return perDoc, len(all)
	}
	if per, _ := distinct("token"); per[0] < 3 {
		t.Errorf("token level: %d distinct outputs for 50 draws at ε = 0.1", per[0])
	}
	if per, all := distinct("record"); per[0] != 1 || per[1] != 1 || all > 2 {
		t.Errorf("record level: %v per record, %d overall", per, all)
	}
	if _, all := distinct("dataset"); all != 1 {
		t.Errorf("dataset level: %d distinct outputs", all)
	}
	// CusText+ keeps stopwords.
	s2 := tinySpace(t, 5, 2, 1, 1)
	s2.Emb.Words[0] = "the"
	s2.Emb = s2.Emb.Top(5) // rebuild the word index
	m, err := NewCusText(s2, 0.1, CusTextParams{K: 3, KeepStopwords: true}, map[string]int64{"the": 5, "w1": 3})
	if err != nil {
		t.Fatal(err)
	}
	stopDocs := [][]string{append(repeatDocs("the", 20)[0], "a", "w1", "nosuchword")} // "a": a stopword without a vector
	out, rep, err := m.Privatize(context.Background(), stopDocs, Source{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out[0][:21] {
		if o != "the" && o != "a" {
			t.Fatalf("stopword changed to %q", o)
		}
	}
	// Kept stopwords are reported as such, not as out of vocabulary.
	if rep.Stopwords != 21 || rep.OOV != 1 || rep.InVocab() != 1 || rep.Tokens != 23 {
		t.Errorf("report: %d stopwords, %d OOV, %d in vocabulary of %d tokens; want 21, 1, 1 of 23", rep.Stopwords, rep.OOV, rep.InVocab(), rep.Tokens)
	}
	if len(Stopwords) != 179 {
		t.Errorf("%d stopwords, NLTK has 179", len(Stopwords))
	}
}

// TestPrecomputedCache: a second space over the same vectors with the same
// cache folder reads the mapping and Σ_p^{1/2} from disk (the test swaps
// in a broken builder to prove nothing is recomputed) and gets the same.
func TestPrecomputedCache(t *testing.T) {
	dir := t.TempDir()
	s := tinySpace(t, 50, 3, 12, 1)
	s.Emb.SourceSHA256 = "test-vectors"
	s.CacheDir = dir
	counts := allCounts(s)
	a, err := NewCusText(s, 1, CusTextParams{K: 4, Mapping: "conservative", Score: "euclidean"}, counts)
	if err != nil {
		t.Fatal(err)
	}
	ma, err := NewMahalanobis(s, 1, 0.3, 0)
	if err != nil {
		t.Fatal(err)
	}
	s2 := tinySpace(t, 50, 3, 12, 1)
	s2.Emb.SourceSHA256, s2.CacheDir = "test-vectors", dir
	recomputed := false
	if err := s2.cached(s2.cacheKey("custext-map", a.mapping.Order, 4, "conservative", "euclidean"), &Mapping{}, func() error {
		recomputed = true
		return nil
	}); err != nil || recomputed {
		t.Fatalf("mapping not served from the cache (err %v)", err)
	}
	b, err := NewCusText(s2, 1, CusTextParams{K: 4, Mapping: "conservative", Score: "euclidean"}, counts)
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := NewMahalanobis(s2, 1, 0.3, 0)
	if !slices.EqualFunc(a.mapping.Sets, b.mapping.Sets, slices.Equal) || !slices.Equal(ma.sqrt, mb.sqrt) {
		t.Error("cached structures differ from the computed ones")
	}
	// A different K is a different key.
	if s.cacheKey("custext-map", a.mapping.Order, 5, "conservative", "euclidean") == s.cacheKey("custext-map", a.mapping.Order, 4, "conservative", "euclidean") {
		t.Error("K does not enter the cache key")
	}
}
