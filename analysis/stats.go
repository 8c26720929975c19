package analysis

import (
	"math"
	"slices"
	"strconv"

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
