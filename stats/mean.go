package stats

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// MeanSD is the mean of x and its sample standard deviation (0 for one
// value; NaN, NaN for none).
func MeanSD(x []float64) (mean, sd float64) {
	switch len(x) {
	case 0:
		return math.NaN(), math.NaN()
	case 1:
		return x[0], 0
	}
	return stat.MeanStdDev(x, nil)
}

// MeanCI is the mean of x, its sample standard deviation and the
// half-width of the mean's 95% confidence interval, t(0.975, n−1)·sd/√n
// (NaN below two values: one seed says nothing of the spread). It is the
// interval xp gives every value replicated over seeds.
func MeanCI(x []float64) (mean, sd, ci float64) {
	mean, sd = MeanSD(x)
	if len(x) < 2 {
		return mean, sd, math.NaN()
	}
	return mean, sd, t975(len(x)-1) * sd / math.Sqrt(float64(len(x)))
}

// SeedsToSettle is the fewest seeds n (at least 2, at most max) at which
// a mean's 95% t-interval would lie wholly on one side of a bar four
// times in five, were the mean truly gap from the bar and sd the seeds'
// spread: (t(0.975, n−1) + z(0.8))·sd/√n < |gap|, the usual power
// calculation. (Where t(0.975, n−1)·sd/√n first falls under |gap|, the
// interval is expected just to reach the bar: a one-in-two chance.) It
// returns max+1 where max seeds would not do (a gap of 0 never settles).
func SeedsToSettle(gap, sd float64, max int) int {
	gap = math.Abs(gap)
	for n := 2; n <= max; n++ {
		if (t975(n-1)+settlePower)*sd/math.Sqrt(float64(n)) < gap {
			return n
		}
	}
	return max + 1
}

// settlePower is z(0.8), the standard normal's 0.8 quantile: the margin
// beyond the interval's half-width that SeedsToSettle asks of the mean's
// distance from the bar for a four-in-five chance.
const settlePower = 0.8416212335729143

// t975 is Student's t distribution's 0.975 quantile with df degrees of
// freedom.
func t975(df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
}

// Wilson is the Wilson score 95% interval of a proportion p observed
// over n trials: inside [0, 1] whatever p and n.
func Wilson(p float64, n int) (lo, hi float64) {
	const z = 1.959963984540054
	fn := float64(n)
	den := 1 + z*z/fn
	centre := (p + z*z/(2*fn)) / den
	half := z * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn)) / den
	return max(0, centre-half), min(1, centre+half)
}
