package mech

import (
	"context"
	"math"
	"slices"
	"testing"
)

// TestDiffractorLineKnownAnswer: five words on a line at 0, 10, 1, 2, 9.
// With 3 neighbours the walk goes 0 → 1 → 2 (by vectors; rows 0, 2, 3),
// finds every neighbour of 2 placed and jumps to the lowest free row
// (1, at 10), then 9. With 2 neighbours the jump comes earlier: at 1 the
// tie between 0 and 2 goes to the lower row, 0, already placed.
func TestDiffractorLineKnownAnswer(t *testing.T) {
	s := lineSpace(t, 0, 10, 1, 2, 9)
	for _, c := range []struct {
		k    int
		want []int32
	}{{3, []int32{0, 2, 3, 1, 4}}, {2, []int32{0, 2, 1, 4, 3}}} {
		line, err := diffractorLine(s, c.k, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(line, c.want) {
			t.Errorf("k = %d: line %v, want %v", c.k, line, c.want)
		}
	}
}

// TestDiffractorExact: geometric noise at ε = ln 2 on five positions from
// the middle gives 1/6, 1/6, 1/3, 1/6, 1/6 (the ends take the tails); the
// tem method is ∝ exp(−ε·min(|i − j|, γ)/2); sampled frequencies match
// both, and the ratio bound ε·|i − i′| holds for every pair.
func TestDiffractorExact(t *testing.T) {
	s := lineSpace(t, 0, 1, 2, 3, 4)
	m, err := NewDiffractor(s, math.Ln2, DiffractorParams{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Line(), []int32{0, 1, 2, 3, 4}) {
		t.Fatalf("line %v", m.Line())
	}
	for j, want := range []float64{1.0 / 6, 1.0 / 6, 1.0 / 3, 1.0 / 6, 1.0 / 6} {
		if got := m.probs(2)[j]; math.Abs(got-want) > 1e-12 {
			t.Errorf("geometric Pr[2 → %d] = %v, want %v", j, got, want)
		}
	}
	tem, err := NewDiffractor(s, 2, DiffractorParams{Method: "tem", Gamma: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	z := 1 + math.Exp(-1) + 3*math.Exp(-1)
	for j, want := range []float64{1 / z, math.Exp(-1) / z, math.Exp(-1) / z, math.Exp(-1) / z, math.Exp(-1) / z} {
		if got := tem.probs(0)[j]; math.Abs(got-want) > 1e-12 {
			t.Errorf("tem Pr[0 → %d] = %v, want %v", j, got, want)
		}
	}
	const N = 40000
	for _, mm := range []*Diffractor{m, tem} {
		for _, w := range []int{0, 2, 4} {
			freq := outputDist(t, mm, s, w, N, 3)
			for y, p := range mm.probs(w) {
				if math.Abs(freq[y]-p) > 4.5*math.Sqrt(p*(1-p)/N)+1e-4 {
					t.Errorf("%s: Pr[%d → %d] sampled %.4f, exact %.4f", mm.Name(), w, y, freq[y], p)
				}
			}
		}
		for x := range 5 {
			for y, p := range mm.probs(x) {
				if lp := mm.LogProb(x, y); math.Abs(lp-math.Log(p)) > 1e-12 {
					t.Errorf("%s: ln Pr[%d → %d] = %v, log of the probability %v", mm.Name(), x, y, lp, math.Log(p))
				}
			}
			for x2 := range 5 {
				for y, p := range mm.probs(x) {
					if p > math.Exp(mm.Bound(x, x2))*mm.probs(x2)[y]*(1+1e-12) {
						t.Errorf("%s: Pr[%d→%d] = %v exceeds e^{%v}·Pr[%d→%d]", mm.Name(), x, y, p, mm.Bound(x, x2), x2, y)
					}
				}
			}
		}
	}
}

// TestDiffractorStopwords: NLTK's stopwords are kept (and counted as
// such) unless replace_stopwords.
func TestDiffractorStopwords(t *testing.T) {
	s := tinySpace(t, 30, 2, 1, 1)
	s.Emb.Words[3] = "the"
	docs := [][]string{{"the", "w4", "the"}}
	for _, replace := range []bool{false, true} {
		m, err := New("diffractor", s, 0.1, Params{"replace_stopwords": replace}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		changed := 0
		for seed := range uint64(20) {
			out, rep, err := m.Privatize(context.Background(), docs, Source{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if !replace && (rep.Stopwords != 2 || out[0][0] != "the" || out[0][2] != "the") {
				t.Fatalf("stopwords not kept: %v %+v", out, rep)
			}
			if out[0][0] != "the" {
				changed++
			}
		}
		if replace && changed == 0 {
			t.Error("replace_stopwords: 'the' never changed at ε = 0.1")
		}
	}
}
