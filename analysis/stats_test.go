package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQuantileCI: the order-statistic interval of a quantile is the
// textbook one on a known case (n = 100, the median: x(40) and x(61),
// 96.5%), infinite on the side a small sample cannot bound, and covers
// the population's quantile in about 95% of seeded samples of a known
// distribution (uniform on [0, 1], the 5th, 50th and 95th percentiles).
func TestQuantileCI(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(i + 1) // x(r) = r
	}
	if lo, hi := quantileCI(xs, 0.5); lo != 40 || hi != 61 {
		t.Errorf("median of 100: [%v, %v], want [40, 61]", lo, hi)
	}
	if lo, hi := quantileCI(xs[:5], 0.5); !math.IsInf(lo, -1) || !math.IsInf(hi, 1) {
		t.Errorf("median of 5: [%v, %v], want unbounded (1/32 > 0.025 on each side)", lo, hi)
	}
	if lo, _ := quantileCI(xs[:20], 0.05); !math.IsInf(lo, -1) {
		t.Errorf("5th percentile of 20: low %v, want −∞", lo)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, q := range []float64{0.05, 0.5, 0.95} {
		covered := 0
		const trials = 400
		for range trials {
			s := make([]float64, 300)
			for i := range s {
				s[i] = r.Float64()
			}
			slices.Sort(s)
			if lo, hi := quantileCI(s, q); lo <= q && q <= hi {
				covered++
			}
		}
		if c := float64(covered) / trials; c < 0.92 || c > 0.995 {
			t.Errorf("q = %v: covered in %.3f of samples, want ≈ 0.95 or a little more", q, c)
		}
	}
}
