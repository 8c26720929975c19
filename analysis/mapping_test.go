package analysis

import (
	"context"
	"math"
	"testing"

	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/mech/mechtest"
)

// TestMappingKnownAnswer: CusText's conservative mapping (K = 2, cosine,
// removed words as zero vectors) on five 2-d vectors gives the sets
// {a, b}, {c, d} and {e, a·0}; the analysis reports the token-weighted
// cosine of each input with its set-mates (e's zero-vector mate counts 0)
// and the tokens whose set holds a zero vector. e's set is used by e
// alone: not of type N–M.
func TestMappingKnownAnswer(t *testing.T) {
	space := mechtest.Space(t, mechtest.Embedding(2, []string{"a", "b", "c", "d", "e"}, []float32{1, 0, 1, 0.3, -0.2, 1, -1, 0.2, 0.1, -1}))
	counts := map[string]int64{"a": 5, "c": 4, "e": 3}
	m, err := mech.NewCusText(space, 1, mech.CusTextParams{K: 2, Mapping: "conservative"}, counts)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Run(context.Background(), "mapping", nil, Env{Space: space, Mech: m, Counts: counts})
	if err != nil {
		t.Fatal(err)
	}
	cosAB := 1 / math.Sqrt(1.09) // (1,0)·(1,0.3)
	cosCD := 0.4 / 1.04          // (−0.2,1)·(−1,0.2)
	wantCos := (5*cosAB + 4*cosCD + 3*0) / 12
	for name, want := range map[string]float64{
		"set-mates' cosine":         wantCos,
		"zero-vector sets % tokens": 100 * 3.0 / 12,
		"not N–M % tokens":          100 * 3.0 / 12, // e alone maps to {e, a}
		"output sets":               3,
	} {
		if got := a.Stat(name); math.Abs(got-want) > 1e-6 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// TestMappingScoresKnownAnswer: three 2-d words, K = 3, cosine score: a's
// set is {a, b, f} with cosines 1, 1/√1.09 and 0, normalised to u = 1,
// 1/√1.09 and 0, so Pr[a|a] = e^{ε/2}/(e^{ε/2} + e^{ε·u_b/2} + 1) and the
// set-mates' mean score is u_b/2.
func TestMappingScoresKnownAnswer(t *testing.T) {
	space := mechtest.Space(t, mechtest.Embedding(2, []string{"a", "b", "f"}, []float32{1, 0, 1, 0.3, 0, 1}))
	counts := map[string]int64{"a": 7}
	for _, eps := range []float64{1, 10} {
		m, err := mech.NewCusText(space, eps, mech.CusTextParams{K: 3, Mapping: "aggressive", Score: "cosine"}, counts)
		if err != nil {
			t.Fatal(err)
		}
		a, err := Run(context.Background(), "mapping", nil, Env{Space: space, Mech: m, Counts: counts})
		if err != nil {
			t.Fatal(err)
		}
		y := float64(float32(0.3)) // b's second coordinate as stored
		ub := 1 / math.Sqrt(1+y*y)
		p0 := math.Exp(eps/2) / (math.Exp(eps/2) + math.Exp(eps*ub/2) + 1)
		for name, want := range map[string]float64{
			"p0 % tokens":      100 * p0,
			"set-mates' score": ub / 2,
		} {
			if got := a.Stat(name); math.Abs(got-want) > 1e-6 {
				t.Errorf("ε = %g: %s = %v, want %v", eps, name, got, want)
			}
		}
	}
}
