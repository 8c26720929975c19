package analysis

import (
	"math"
	"testing"

	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/mech"
)

// TestSeenOnce: the recovery credited by outputs that only one draw gave
// — how far a sampled f_M's plug-in posterior may flatter the adversary
// (Twitter's reduced run had Vickrey's E_M rise from ε = 25 to 100: at
// ε = 25 about 40% of its draws were outputs seen once).
func TestSeenOnce(t *testing.T) {
	ds := []distribution{
		{outs: []int32{1, 2}, p: []float64{0.5, 0.5}}, // word A: outputs 1, 2 once each in m = 2
		{outs: []int32{2, 3}, p: []float64{0.5, 0.5}}, // word B: 2 and 3
	}
	// Output 2 was drawn twice (A and B), 1 and 3 once: one draw of A
	// (prior 0.8) and one of B (0.2), each 1/m of its word: 0.4 + 0.1.
	if got := seenOnce([]float64{0.8, 0.2}, ds, 2); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("seenOnce = %v, want 0.5", got)
	}
	// Under a uniform prior it is the share of draws seen once.
	if got := seenOnce([]float64{0.5, 0.5}, ds, 2); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("uniform: seenOnce = %v, want 0.5", got)
	}
	if got := seenOnce([]float64{0.9, 0.1}, []distribution{{outs: []int32{1, 2}, p: []float64{0.5, 0.5}}, {outs: []int32{1, 2}, p: []float64{0.5, 0.5}}}, 2); got != 0 {
		t.Errorf("every output drawn twice: seenOnce = %v, want 0", got)
	}
	if got := seenOnce([]float64{1}, []distribution{{outs: []int32{7}, p: []float64{1}}}, 30); got != 0 {
		t.Errorf("one output drawn 30 times: seenOnce = %v, want 0", got)
	}
}

// TestLeaveOneOut: the held-out adversary scores each draw with a
// posterior that has not seen it. Outputs drawn once give it no evidence
// (it guesses by the prior) where the plug-in posterior is certain; for
// two words with the same outputs the truth (E_M = 0.5) lies between the
// plug-in (0.5, exact here) and the held-out estimate (2/3).
func TestLeaveOneOut(t *testing.T) {
	prior := []float64{0.5, 0.5}
	z := func(ds []distribution) map[int32]float64 {
		out := map[int32]float64{}
		for i, d := range ds {
			for j, o := range d.outs {
				out[o] += prior[i] * d.p[j]
			}
		}
		return out
	}
	apart := []distribution{{outs: []int32{1, 2}, p: []float64{0.5, 0.5}}, {outs: []int32{3, 4}, p: []float64{0.5, 0.5}}}
	if got := leaveOneOut(prior, apart, z(apart), 2); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("outputs all drawn once: held-out recovery %v, want the prior's 0.5", got)
	}
	same := []distribution{{outs: []int32{1}, p: []float64{1}}, {outs: []int32{1}, p: []float64{1}}}
	if got := leaveOneOut(prior, same, z(same), 2); math.Abs(got-1.0/3) > 1e-12 {
		t.Errorf("shared output: held-out recovery %v, want 1/3", got)
	}
}

// TestAdversaryUnderflow: an exact distribution whose far tail, times
// its word's prior, underflows to 0 — where no word's share of that
// output survives, so its total is 0 too — leaves E_M finite: the output
// adds nothing (1-Diffractor's line at small ε gave E_M NaN, 0/0).
func TestAdversaryUnderflow(t *testing.T) {
	ds := []distribution{
		{outs: []int32{0, 2}, p: []float64{1, 5e-324}}, // the smallest subnormal: half of it is 0
		{outs: []int32{1}, p: []float64{1}},
	}
	space := &mech.Space{Emb: &embedding.Embedding{Words: []string{"a", "b", "c"}, Dim: 1, Data: []float32{0, 1, 2}}}
	s := adversary(Env{Space: space}, []int{0, 1}, []float64{0.5, 0.5}, ds, 0, true)
	if math.IsNaN(s.em) || math.Abs(s.em) > 1e-12 {
		t.Errorf("E_M = %v, want 0 (each word's own output names it)", s.em)
	}
}
