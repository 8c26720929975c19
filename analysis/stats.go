package analysis

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/xp-nlp/xp/metrics"
)

// percentile is the q-th percentile (0–100) of sorted xs, interpolating
// linearly between order statistics (R's type 7, NumPy's default).
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := (float64(len(sorted)) - 1) * q / 100
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

// quantileCI is the distribution-free 95% confidence interval of the
// population's q-quantile (q in [0, 1]) from a sorted sample: the order
// statistics x(l) ≤ x(u) with l the largest and u the smallest rank such
// that Pr[Binomial(n, q) < l] ≤ 0.025 and Pr[Binomial(n, q) ≥ u] ≤ 0.025,
// so that Pr[x(l) ≤ quantile ≤ x(u)] ≥ 0.95. Ranks beyond the sample
// give ±∞ (too few words for that side).
func quantileCI(sorted []float64, q float64) (lo, hi float64) {
	n := len(sorted)
	if n == 0 {
		return math.Inf(-1), math.Inf(1)
	}
	b := distuv.Binomial{N: float64(n), P: q}
	// l: the largest 1-based rank with Pr[B < l] ≤ 0.025 (0: none, −∞);
	// u: the smallest with Pr[B ≥ u] ≤ 0.025 (n+1: none, +∞). Both lie
	// within a few standard deviations of n·q: search from there.
	l := int(math.Floor(float64(n) * q))
	for l >= 1 && b.CDF(float64(l-1)) > 0.025 {
		l--
	}
	u := max(int(math.Ceil(float64(n)*q)), 1)
	for u <= n && 1-b.CDF(float64(u-1)) > 0.025 {
		u++
	}
	lo, hi = math.Inf(-1), math.Inf(1)
	if l >= 1 {
		lo = sorted[l-1]
	}
	if u <= n {
		hi = sorted[u-1]
	}
	return lo, hi
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// summarize adds the distribution of xs over words: mean, min, the 5th,
// 50th and 95th percentiles, max.
func summarize(a *metrics.Analysis, name string, xs []float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	a.Add(name+" mean", mean(s))
	a.Add(name+" min", s[0])
	for _, q := range []float64{5, 50, 95} {
		a.Add(name+" p"+trimFloat(q), percentile(s, q))
	}
	a.Add(name+" max", s[len(s)-1])
}

func trimFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func nums(xs []float64) []metrics.Num {
	out := make([]metrics.Num, len(xs))
	for i, x := range xs {
		out[i] = metrics.Num(x)
	}
	return out
}
