package mech

import (
	"context"
	"math"
	"slices"
	"testing"
)

// TestTEMKnownAnswer: words at 0, 1, 3 and 10 on a line, ε = 2, γ = 2.
// From w0 the distances 0, 1, 3, 10 clip to 0, 1, 2, 2: Pr ∝ 1, e^−1,
// e^−2, e^−2 — both words beyond γ equally likely, however far. γ from β
// follows (2/ε)·ln((1−β)|W|/β), and a γ beyond every distance is SanText
// over the whole vocabulary.
func TestTEMKnownAnswer(t *testing.T) {
	s := lineSpace(t, 0, 1, 3, 10)
	m, err := New("tem", s, 2, Params{"gamma": 2.0}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	outs, p, err := m.(*SanText).Probabilities(0)
	if err != nil {
		t.Fatal(err)
	}
	z := 1 + math.Exp(-1) + 2*math.Exp(-2)
	want := []float64{1 / z, math.Exp(-1) / z, math.Exp(-2) / z, math.Exp(-2) / z}
	if !slices.Equal(outs, []int32{0, 1, 2, 3}) {
		t.Fatalf("outputs %v, want every word", outs)
	}
	for i := range want {
		if math.Abs(p[i]-want[i]) > 1e-12 {
			t.Errorf("Pr[w0→w%d] = %.15f, want %.15f", i, p[i], want[i])
		}
	}
	if m.Name() != "tem(gamma=2)" {
		t.Errorf("name %q", m.Name())
	}

	mb, err := New("tem", s, 2, Params{"beta": 0.01}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mb.(*SanText).Gamma(), math.Log(0.99*4/0.01); math.Abs(g-w) > 1e-12 {
		t.Errorf("γ from β = 0.01 over 4 words at ε = 2: %v, want ln(396) = %v", g, w)
	}
	// Defaults: β = 0.001.
	md, _ := New("tem", s, 4, nil, Options{})
	if g, w := md.(*SanText).Gamma(), 0.5*math.Log(0.999*4/0.001); math.Abs(g-w) > 1e-12 {
		t.Errorf("default γ at ε = 4: %v, want %v", g, w)
	}

	// γ beyond every distance: SanText over the embedding.
	far, _ := New("tem", s, 2, Params{"gamma": 100.0}, Options{})
	st, _ := New("santext", s, 2, Params{"candidates": "embedding"}, Options{})
	for w := range 4 {
		_, a, _ := far.(*SanText).Probabilities(w)
		_, b, _ := st.(*SanText).Probabilities(w)
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-15 {
				t.Fatalf("γ = 100: Pr[w%d→w%d] = %v, SanText %v", w, i, a[i], b[i])
			}
		}
	}
}

// TestTEMExact: on 40 random words, the exact distribution meets the
// ε·d bound for every pair of inputs and every output (at a γ that
// truncates most pairs), and sampled frequencies match it.
func TestTEMExact(t *testing.T) {
	s := tinySpace(t, 40, 3, 4, 1)
	m, err := NewTEM(s, 2, TEMParams{Gamma: 1.5}, 0)
	if err != nil {
		t.Fatal(err)
	}
	truncated := 0
	for w := range 40 {
		for y := range 40 {
			if dist(s.Emb.Vector(w), s.Emb.Vector(y)) > 1.5 {
				truncated++
			}
		}
	}
	if truncated < 40*40/2 {
		t.Fatalf("only %d of 1,600 pairs beyond γ: the fixture does not exercise truncation", truncated)
	}
	checkExact(t, m, s)
	out, rep, err := m.Privatize(context.Background(), repeatDocs("w3", 10), Source{Seed: 1})
	if err != nil || rep.Mechanism != "tem(gamma=1.5)" || rep.CandidateCount != 40 || len(out[0]) != 10 {
		t.Errorf("report %+v, err %v", rep, err)
	}
}
