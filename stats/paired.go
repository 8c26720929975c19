package stats

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Paired is the comparison of two classifiers A and B scored on the same
// examples by the same seeds (see SignFlip).
type Paired struct {
	Seeds    int // seeds that scored both
	Examples int // examples each of those seeds scored
	// Diff is A's accuracy minus B's, averaged over the seeds.
	Diff float64
	// Discordant counts the examples on which A and B differ once their
	// results are summed over the seeds: the test rests on these alone.
	Discordant int
	// P is the two-sided p-value of the sign-flip test.
	P float64
	// Exact says P is the exact randomization p-value; false, its normal
	// approximation with continuity correction (more discordant examples
	// than ExactWork allows to enumerate).
	Exact bool
}

// ExactWork bounds the convolution SignFlip computes exactly (products of
// the support's size and a binomial's): beyond it, the normal
// approximation, then within a few 1e-3 of the exact value.
const ExactWork = 2e8

// SignFlip tests whether two classifiers differ in accuracy on one test
// set, from their per-example results by seed (seed → one byte per example
// in the split's order, '1' right and '0' wrong, as
// metrics.Classification.Correct records them). Only the seeds both carry
// are used; each must have scored the same number of examples.
//
// Each example is one unit: k_i, the number of those seeds on which A was
// right on example i less the number on which B was, sums its outcomes
// over the seeds, so an example scored by three seeds counts once, not
// three times (McNemar's test over the seeds' results concatenated treats
// them as independent examples and overstates the evidence). Under the
// null hypothesis that on each example A's and B's results are
// exchangeable, k_i is as likely as −k_i; the p-value is the probability,
// under the 2^n equally likely sign flips, of |Σ k_i| at least the
// observed one — exact, by convolving one binomial per value of |k_i|,
// up to ExactWork, and its normal approximation with continuity
// correction beyond. With one seed it is McNemar's exact test.
//
// The test conditions on the trained models: it asks whether the examples
// support the difference those models show, not whether retraining would
// reproduce it (the t-interval of the seeds' differences says that).
func SignFlip(a, b map[uint64]string) (Paired, error) {
	var seeds []uint64
	for s := range a {
		if _, ok := b[s]; ok {
			seeds = append(seeds, s)
		}
	}
	slices.Sort(seeds)
	if len(seeds) == 0 {
		return Paired{}, fmt.Errorf("stats: no seed scored both")
	}
	n := len(a[seeds[0]])
	if n == 0 {
		return Paired{}, fmt.Errorf("stats: seed %d scored no example", seeds[0])
	}
	k := make([]int, n)
	diff := 0.0
	for _, s := range seeds {
		ra, rb := a[s], b[s]
		if len(ra) != n || len(rb) != n {
			return Paired{}, fmt.Errorf("stats: seed %d scored %d and %d examples where seed %d scored %d: not the same examples", s, len(ra), len(rb), seeds[0], n)
		}
		right := 0
		for i := range n {
			x, y := ra[i], rb[i]
			if (x != '0' && x != '1') || (y != '0' && y != '1') {
				return Paired{}, fmt.Errorf("stats: seed %d, example %d: results %q and %q, not 0 or 1", s, i, x, y)
			}
			d := int(x) - int(y)
			k[i] += d
			right += d
		}
		diff += float64(right) / float64(n)
	}
	p, exact := signFlipP(k, len(seeds), ExactWork)
	out := Paired{Seeds: len(seeds), Examples: n, Diff: diff / float64(len(seeds)), P: p, Exact: exact}
	for _, x := range k {
		if x != 0 {
			out.Discordant++
		}
	}
	return out, nil
}

// signFlipP is the two-sided p-value of Σ k under independent random
// signs of each k_i, |k_i| ≤ s, and whether it is exact (it is where the
// convolution's work is at most limit).
func signFlipP(k []int, s int, limit float64) (p float64, exact bool) {
	m := make([]int, s+1) // m[j]: how many |k_i| = j
	t, vr, g := 0, 0.0, 0
	for _, x := range k {
		t += x
		a := abs(x)
		m[a]++
		vr += float64(a * a)
		g = gcd(g, a)
	}
	t = abs(t)
	if t == 0 {
		return 1, true
	}
	// The work of the exact convolution: the support grows by 2·j·m[j]
	// with each binomial of m[j]+1 terms.
	work, width := 0.0, 1.0
	for j := 1; j <= s; j++ {
		if m[j] > 0 {
			work += width * float64(m[j]+1)
			width += float64(2 * j * m[j])
		}
	}
	if work > limit {
		z := max(0, float64(t-g)) / math.Sqrt(vr)
		return min(1, math.Erfc(z/math.Sqrt2)), false
	}
	// pmf[T+off]: the distribution of Σ j·(2X_j − m_j), X_j ~ Binomial(m_j, ½).
	pmf, off := []float64{1}, 0
	for j := 1; j <= s; j++ {
		if m[j] == 0 {
			continue
		}
		b := binomialHalf(m[j])
		noff := off + j*m[j]
		next := make([]float64, 2*noff+1)
		for i, v := range pmf {
			if v == 0 {
				continue
			}
			for x, q := range b {
				next[i-off+j*(2*x-m[j])+noff] += v * q
			}
		}
		pmf, off = next, noff
	}
	tail := 0.0 // Pr[T ≥ t]; the distribution is symmetric
	for i := t + off; i < len(pmf); i++ {
		tail += pmf[i]
	}
	return min(1, 2*tail), true
}

// binomialHalf is the probability mass function of Binomial(n, ½).
func binomialHalf(n int) []float64 {
	out := make([]float64, n+1)
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	for x := range out {
		out[x] = math.Exp(lg(n) - lg(x) - lg(n-x) - float64(n)*math.Ln2)
	}
	return out
}

// McNemar is the exact two-sided McNemar p-value of b discordant pairs one
// way and c the other: twice the smaller tail of Binomial(b+c, ½), at most
// 1 (1 where there is no discordant pair).
func McNemar(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	tail := distuv.Binomial{N: float64(n), P: 0.5}.CDF(float64(min(b, c)))
	return min(1, 2*tail)
}

// Holm adjusts a family of p-values for multiplicity by Holm's step-down
// method (Holm 1979): in ascending order, the i-th smallest (from 0)
// becomes the largest of min(1, (m − j)·p_(j)) over j ≤ i, m the family's
// size. Calling significant every test whose adjusted value is below α
// keeps the chance of any false rejection in the family at most α,
// whatever the dependence between the tests. NaN entries are not tests:
// they stay NaN and do not count in m.
func Holm(p []float64) []float64 {
	out := make([]float64, len(p))
	var idx []int
	for i, x := range p {
		out[i] = math.NaN()
		if !math.IsNaN(x) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case p[i] < p[j]:
			return -1
		case p[i] > p[j]:
			return 1
		}
		return 0
	})
	run := 0.0
	for r, i := range idx {
		run = max(run, min(1, float64(len(idx)-r)*p[i]))
		out[i] = run
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
