package analysis

import (
	"context"
	"math"
	"slices"
	"testing"
)

// bruteVote enumerates every sequence of n draws.
func bruteVote(p []float64, n int) float64 {
	counts := make([]int, len(p))
	var rec func(left int, prob float64) float64
	rec = func(left int, prob float64) float64 {
		if left == 0 {
			if counts[0] > slices.Max(counts[1:]) {
				return prob
			}
			return 0
		}
		var s float64
		for i, x := range p {
			counts[i]++
			s += rec(left-1, prob*x)
			counts[i]--
		}
		return s
	}
	return rec(n, 1)
}

func TestVoteAccuracyExact(t *testing.T) {
	for _, p := range [][]float64{{0.5, 0.25, 0.25}, {0.4, 0.3, 0.2, 0.1}, {0.34, 0.33, 0.33}, {0.9, 0.1}, {0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}} {
		for n := 1; n <= 7; n++ {
			v := newVote(p[0], p[1:], 1)
			got, want := v.accuracy(n), bruteVote(p, n)
			if math.Abs(got-want) > 1e-12 || v.simulated {
				t.Errorf("p=%v n=%d: accuracy %v, enumeration %v (simulated %v)", p, n, got, want, v.simulated)
			}
		}
	}
	// Ties fail: with two equally likely outputs a vote of 2 wins only when both are w.
	if got := newVote(0.5, []float64{0.5}, 1).accuracy(2); math.Abs(got-0.25) > 1e-15 {
		t.Errorf("tie accuracy %v, want 0.25", got)
	}
}

func TestSmallestN(t *testing.T) {
	v := newVote(0.5, []float64{0.25, 0.25}, 1)
	n, ok := v.smallest(context.Background(), 0.95, 10000)
	if !ok {
		t.Fatal("never reached")
	}
	// The smallest n is the first whose accuracy reaches 0.95, and no
	// smaller n does.
	if v.accuracy(n) < 0.95 {
		t.Errorf("n=%d accuracy %v", n, v.accuracy(n))
	}
	for m := 1; m < n; m++ {
		if v.accuracy(m) >= 0.95 {
			t.Errorf("n=%d reported but %d reaches %v", n, m, v.accuracy(m))
		}
	}
	if _, ok := newVote(0.01, []float64{0.0099, 0.9801}, 1).smallest(context.Background(), 0.95, 64); ok {
		t.Error("a word less likely than another output reached the target")
	}
}

func TestPercentile(t *testing.T) {
	s := []float64{1, 2, 3, 4, 5}
	for _, c := range []struct{ q, want float64 }{{0, 1}, {50, 3}, {100, 5}, {25, 2}, {10, 1.4}} {
		if got := percentile(s, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("p%v = %v, want %v", c.q, got, c.want)
		}
	}
}

// TestVoteRunnerUpReadsTable7: CusText's Table 7 publishes N ≈ 80–95 at
// p0 = 0.5 for every K; the vote needs that many only when a runner-up
// takes about a third of the mass (p1 ≈ 0.33, the other 48 of K = 50
// sharing the rest), while with the runner-up xp records on the shared
// fastText vectors (p1 ≈ 0.05 at p0 ≈ 0.5) about 10 suffice.
// docs/reproduction.md (CusText Table 7) reads the disagreement with it.
func TestVoteRunnerUpReadsTable7(t *testing.T) {
	for _, c := range []struct {
		p1     float64
		lo, hi int
	}{{0.05, 8, 12}, {0.33, 75, 100}} {
		rest := make([]float64, 49)
		rest[0] = c.p1
		for i := 1; i < len(rest); i++ {
			rest[i] = (0.5 - c.p1) / 48
		}
		n, ok := newVote(0.5, rest, 1).smallest(context.Background(), 0.95, 10000)
		if !ok || n < c.lo || n > c.hi {
			t.Errorf("p0 = 0.5, p1 = %v: N = %d (reached %v), want %d–%d", c.p1, n, ok, c.lo, c.hi)
		}
		t.Logf("p0 = 0.5, p1 = %v: N = %d", c.p1, n)
	}
}
