package mech

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
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
	if err := s2.cached(mappingKey(s2, a.mapping.Order, a.p), &Mapping{}, func() error {
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
	p5, dropped := a.p, a.p
	p5.K, dropped.Removed = 5, "zero"
	if mappingKey(s, a.mapping.Order, p5) == mappingKey(s, a.mapping.Order, a.p) {
		t.Error("K does not enter the cache key")
	}
	if mappingKey(s, a.mapping.Order, dropped) == mappingKey(s, a.mapping.Order, a.p) {
		t.Error("the conservative mapping's removal does not enter the cache key")
	}
}

// refMapping is Algorithm 1 as the authors' code runs it, one word at a
// time over every row in float64 (the reference for buildMapping's
// blocked search): with removed = zero a chosen set's rows stay in the
// ranking at cosine 0 (distance √2 on unit vectors), with drop they leave
// it.
func refMapping(s *Space, xs []int32, p CusTextParams) (sets [][]int32, zeroed [][]bool, of map[int32]int32) {
	n, dim := s.Emb.Len(), s.Emb.Dim
	vec := func(i int) []float32 { return s.Emb.Vector(i) }
	if p.Score == "cosine" {
		ix, _ := unitIndex(s)
		defer ix.Close()
		vec = ix.Row
	}
	removed := make([]bool, n)
	of = map[int32]int32{}
	for _, x := range xs {
		if _, done := of[x]; done && p.Mapping != "aggressive" {
			continue
		}
		type cd struct {
			i   int32
			d   float64
			zer bool
		}
		var all []cd
		for y := 0; y < n; y++ {
			switch {
			case removed[y] && p.Removed == "zero":
				all = append(all, cd{int32(y), math.Sqrt2, true})
			case removed[y]:
			default:
				var d float64
				for j := 0; j < dim; j++ {
					t := float64(vec(int(x))[j]) - float64(vec(y)[j])
					d += t * t
				}
				all = append(all, cd{int32(y), math.Sqrt(d), false})
			}
		}
		slices.SortFunc(all, func(a, b cd) int {
			if a.d != b.d {
				return cmp.Compare(a.d, b.d)
			}
			return cmp.Compare(a.i, b.i)
		})
		all = all[:min(p.K, len(all))]
		var set []int32
		var z []bool
		for _, c := range all {
			set, z = append(set, c.i), append(z, c.zer)
		}
		if !slices.Contains(set, x) {
			set[len(set)-1], z[len(set)-1] = x, false
		}
		if !slices.Contains(z, true) {
			z = nil
		}
		si := int32(len(sets))
		sets, zeroed = append(sets, set), append(zeroed, z)
		if p.Mapping == "aggressive" {
			of[x] = si
			continue
		}
		for _, y := range set {
			if _, has := of[y]; !has {
				of[y] = si
			}
		}
		of[x] = si
		if p.Mapping == "conservative" {
			for _, y := range set {
				removed[y] = true
			}
		}
	}
	return sets, zeroed, of
}

// TestBuildMappingEqualsReference: the blocked, masked search builds
// exactly the reference's sets (and zero-vector members) for every
// mapping, score and removal, with every word an input (so the
// conservative mapping runs out of words of positive cosine and fills
// sets with removed ones) and with a third of them.
func TestBuildMappingEqualsReference(t *testing.T) {
	s := tinySpace(t, 700, 4, 21, 1)
	all := make([]int32, s.Emb.Len())
	for i := range all {
		all[i] = int32((i * 3) % len(all)) // every row, not in row order
	}
	for _, xs := range [][]int32{all, all[:len(all)/3]} {
		for _, c := range []CusTextParams{
			{K: 6, Mapping: "aggressive", Score: "cosine"},
			{K: 6, Mapping: "balanced", Score: "euclidean"},
			{K: 6, Mapping: "balanced", Score: "cosine"},
			{K: 6, Mapping: "conservative", Score: "euclidean", Removed: "drop"},
			{K: 6, Mapping: "conservative", Score: "cosine", Removed: "drop"},
			{K: 6, Mapping: "conservative", Score: "cosine", Removed: "zero"},
			{K: 40, Mapping: "conservative", Score: "cosine", Removed: "zero"},
		} {
			mp, err := buildMapping(s, xs, c)
			if err != nil {
				t.Fatal(err)
			}
			sets, zeroed, of := refMapping(s, xs, c)
			name := fmt.Sprintf("%d inputs %+v", len(xs), c)
			if !slices.EqualFunc(mp.Sets, sets, slices.Equal) {
				for i := range min(len(sets), len(mp.Sets)) {
					if !slices.Equal(mp.Sets[i], sets[i]) {
						t.Fatalf("%s: set %d is %v, want %v", name, i, mp.Sets[i], sets[i])
					}
				}
				t.Fatalf("%s: %d sets, want %d", name, len(mp.Sets), len(sets))
			}
			if !maps.Equal(mp.Of, of) {
				t.Fatalf("%s: f_map differs", name)
			}
			fills := 0
			for si := range sets {
				for j := range sets[si] {
					want := zeroed[si] != nil && zeroed[si][j]
					if mp.ZeroAt(int32(si), j) != want {
						t.Fatalf("%s: set %d member %d zeroed %v, want %v", name, si, j, !want, want)
					}
					if want {
						fills++
					}
				}
			}
			if c.Removed == "zero" && len(xs) == len(all) && fills == 0 {
				t.Errorf("%s: no set took a removed word: the fill is not exercised", name)
			}
			t.Logf("%s: %d sets, %d members at cosine 0", name, len(sets), fills)
		}
	}
}

// TestConservativeZeroKnownAnswer pins the authors' conservative mapping
// with the cosine score on five 2-d vectors, K = 2: "a" takes {a, b};
// "c" takes {c, d} (cos(c, e) < 0); "e" has no remaining word of positive
// cosine but itself, so its set is filled with the first removed row, a,
// scored at cosine 0: Pr[e] = e^(ε/2)/(e^(ε/2)+1). Dropping removed words
// instead leaves e alone.
func TestConservativeZeroKnownAnswer(t *testing.T) {
	s := knownSpace(t, 2, []string{"a", "b", "c", "d", "e"}, []float32{1, 0, 1, 0.3, -0.2, 1, -1, 0.2, 0.1, -1})
	counts := map[string]int64{"a": 5, "c": 4, "e": 3}
	const eps = 2.0
	for _, c := range []struct {
		removed string
		sets    map[string][]string
		pe      float64 // Pr[e | e]
	}{
		{"", map[string][]string{"a": {"a", "b"}, "c": {"c", "d"}, "e": {"e", "a"}}, math.Exp(eps/2) / (math.Exp(eps/2) + 1)},
		{"drop", map[string][]string{"a": {"a", "b"}, "c": {"c", "d"}, "e": {"e"}}, 1},
	} {
		typed, err := NewCusText(s, eps, CusTextParams{K: 2, Mapping: "conservative", Removed: c.removed}, counts)
		if err != nil {
			t.Fatal(err)
		}
		params := Params{"k": 2, "mapping": "conservative"}
		if c.removed != "" {
			params["removed"] = c.removed
		}
		built, err := New("custext", s, eps, params, Options{Counts: counts}) // as a config builds it
		if err != nil {
			t.Fatal(err)
		}
		for how, m := range map[string]Mechanism{"NewCusText": typed, "New": built} {
			for w, want := range c.sets {
				got, p, ok := m.(*CusText).Probabilities(w)
				if !ok || !slices.Equal(got, want) {
					t.Errorf("%s, removed %q: set of %s is %v, want %v", how, c.removed, w, got, want)
				}
				if w == "e" && math.Abs(p[0]-c.pe) > 1e-12 {
					t.Errorf("%s, removed %q: Pr[e | e] = %v, want %v", how, c.removed, p[0], c.pe)
				}
			}
		}
	}
	if _, err := NewCusText(s, eps, CusTextParams{K: 2, Mapping: "conservative", Score: "euclidean", Removed: "zero"}, counts); err == nil ||
		!strings.Contains(err.Error(), "removed = zero needs score = cosine") {
		t.Errorf("removed: zero with the Euclidean score: %v", err)
	}
}

// TestPrebuilt: a CusText mapping reads as prebuilt exactly when the
// space's cache holds it (after a build with the same K and mapping, not
// another);
// mechanisms without such a structure are always prebuilt.
func TestPrebuilt(t *testing.T) {
	s := tinySpace(t, 60, 3, 2, 1)
	s.CacheDir, s.Emb.SourceSHA256 = t.TempDir(), "tiny" // structures are cached only for a checksummed source
	counts := map[string]int64{}
	for i, w := range s.Emb.Words[:30] {
		counts[w] = int64(1 + i%7)
	}
	if !Prebuilt(s, "laplace", nil, counts) || Prebuilt(s, "custext", Params{"k": 5}, counts) {
		t.Fatal("before any build")
	}
	if _, err := New("custext", s, 2, Params{"k": 5}, Options{Counts: counts}); err != nil {
		t.Fatal(err)
	}
	if !Prebuilt(s, "custext", Params{"k": 5}, counts) {
		t.Error("K = 5 built, not read as prebuilt")
	}
	if Prebuilt(s, "custext", Params{"k": 6}, counts) || Prebuilt(s, "custext", Params{"k": 5, "mapping": "aggressive"}, counts) {
		t.Error("another K or mapping read as prebuilt")
	}
}

// TestCusTextLargeEpsilon: exp(ε·u/2) overflows past ε ≈ 1,418; the
// output distribution must stay one (the top score's mass → 1), not NaN,
// and agree with the closed form computed in log space.
func TestCusTextLargeEpsilon(t *testing.T) {
	s := tinySpace(t, 80, 3, 9, 1)
	for _, eps := range []float64{1, 1000, 2000, 1e5} {
		m, err := NewCusText(s, eps, CusTextParams{K: 8, Mapping: "balanced", Score: "euclidean"}, allCounts(s))
		if err != nil {
			t.Fatal(err)
		}
		for x, p := range m.probs {
			set := m.mapping.Sets[m.mapping.Of[x]]
			xv := s.Emb.Vector(int(x))
			d := make([]float64, len(set))
			for i, y := range set {
				d[i] = dist(xv, s.Emb.Vector(int(y)))
			}
			lo, hi := slices.Min(d), slices.Max(d)
			var z float64 // Σ exp(ε(u_i − 1)/2), u = 1 − (d − lo)/(hi − lo)
			for i := range d {
				z += math.Exp(-eps * (d[i] - lo) / (hi - lo) / 2)
			}
			var sum float64
			for i, pi := range p {
				want := math.Exp(-eps*(d[i]-lo)/(hi-lo)/2) / z
				if math.IsNaN(pi) || math.Abs(pi-want) > 1e-12 {
					t.Fatalf("ε %g: Pr[%d → %d] = %v, want %v", eps, x, set[i], pi, want)
				}
				sum += pi
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("ε %g: probabilities of %d sum to %v", eps, x, sum)
			}
		}
	}
}
