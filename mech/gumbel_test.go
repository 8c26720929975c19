package mech

import (
	"context"
	"math"
	"strings"
	"testing"
)

func TestLambertW0(t *testing.T) {
	for _, c := range []struct{ x, w float64 }{
		{0, 0},
		{1, 0.5671432904097838},
		{math.E, 1},
		{10, 1.7455280027406994},
		{1e6, 11.383358086140053},
	} {
		if got := lambertW0(c.x); math.Abs(got-c.w) > 1e-12*(1+c.w) {
			t.Errorf("W0(%v) = %v, want %v", c.x, got, c.w)
		}
	}
}

// TestGumbelScale: b = 2Δmax / min(W₀(2aΔmax), ln(aΔmin)) with
// a = (ε − 2(1 + ln|W|)/Δmin)/3, and an error naming the smallest ε
// where a·Δmin ≤ 1.
func TestGumbelScale(t *testing.T) {
	a := (12 - 2*(1+math.Log(3))) / 3 // 2.601…
	want := 6 / math.Min(lambertW0(2*a*3), math.Log(a))
	if b, err := gumbelScale(12, 3, 1, 3); err != nil || math.Abs(b-want) > 1e-12 {
		t.Errorf("scale %v (%v), want %v", b, err, want)
	}
	_, err := gumbelScale(7, 3, 1, 3)
	if err == nil || !strings.Contains(err.Error(), "ε > 7.1972") {
		t.Errorf("ε 7 below the range: %v", err)
	}
}

// gumbelBeats is Pr[g_a − g_b > c] for independent Gumbel(0, b) draws
// truncated to [−Δ, Δ], by the midpoint rule.
func gumbelBeats(c, b, delta float64) float64 {
	F := func(u float64) float64 { return math.Exp(-math.Exp(-u / b)) }
	lo, hi := F(-delta), F(delta)
	above := func(x float64) float64 { // Pr[g > x]
		x = min(max(x, -delta), delta)
		return (hi - F(x)) / (hi - lo)
	}
	const steps = 200000
	h := 2 * delta / steps
	var s float64
	for i := range steps {
		u := -delta + (float64(i)+0.5)*h
		pdf := math.Exp(-u/b) * math.Exp(-math.Exp(-u/b)) / b / (hi - lo)
		s += pdf * above(c+u) * h
	}
	return s
}

// TestGumbelKnownAnswer: words at 0, 1 and 3 on a line, ε = 12, Δmin 1,
// Δmax 3. k is Poisson of mean ln 2 truncated to at most 2; k ≤ 1 returns
// the word, k = 2 its nearest other word when that one's noisy distance
// is the smaller: from w0, Pr[w1] = Pr[k = 2]·Pr[g − g′ > 1] and w2 is
// never output; from w2, Pr[w1] = Pr[k = 2]·Pr[g − g′ > 2]. Draws agree,
// and the exact ceiling (Pr[k > rank]) holds.
func TestGumbelKnownAnswer(t *testing.T) {
	s := lineSpace(t, 0, 1, 3)
	m, err := NewGumbel(s, 12, GumbelParams{MinDist: 1, MaxDist: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := m.Scale()
	mu := math.Log(2)
	k2 := mu * mu / 2 / (1 + mu + mu*mu/2)
	const N = 200000
	for _, c := range []struct {
		from string
		want map[string]float64
	}{
		{"w0", map[string]float64{"w0": 1 - k2*gumbelBeats(1, b, 3), "w1": k2 * gumbelBeats(1, b, 3)}},
		{"w2", map[string]float64{"w2": 1 - k2*gumbelBeats(2, b, 3), "w1": k2 * gumbelBeats(2, b, 3)}},
	} {
		out, rep, err := m.Privatize(context.Background(), repeatDocs(c.from, N), Source{Seed: 4, Cell: "gumbel"})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, o := range out[0] {
			got[o] += 1.0 / N
		}
		for w, p := range got {
			if p > 0 && c.want[w] == 0 {
				t.Errorf("from %s: %s drawn %.4f, never possible", c.from, w, p)
			}
		}
		for w, p := range c.want {
			if math.Abs(got[w]-p) > 4.5*math.Sqrt(p*(1-p)/N) {
				t.Errorf("from %s: %s drawn %.4f, exact %.4f", c.from, w, got[w], p)
			}
			x, _ := s.Emb.Index(c.from)
			y, _ := s.Emb.Index(w)
			if ceil := math.Exp(m.LogProbCeiling(x, y)); p > ceil*(1+1e-12) {
				t.Errorf("from %s: Pr[%s] = %.4f above the ceiling %.4f", c.from, w, p, ceil)
			}
		}
		if rep.Unchanged != int64(math.Round(got[c.from]*N)) {
			t.Errorf("from %s: %d unchanged reported, %v drawn", c.from, rep.Unchanged, got[c.from]*N)
		}
	}
	// From w0, w2 is past every k (at most |W| − 1 = 2 nearest: w0, w1).
	if c := m.LogProbCeiling(0, 2); !math.IsInf(c, -1) {
		t.Errorf("ceiling of w0 → w2 is %v, want −Inf", c)
	}
	if c := m.LogProbCeiling(0, 0); c != 0 {
		t.Errorf("ceiling of w0 → w0 is %v, want 0", c)
	}
	if c, want := m.LogProbCeiling(0, 1), math.Log(k2); math.Abs(c-want) > 1e-12 {
		t.Errorf("ceiling of w0 → w1 is %v, want ln Pr[k = 2] = %v", c, want)
	}
}
