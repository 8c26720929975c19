package analysis

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/xp-nlp/xp/internal/rng"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// queryAttack is CusText's query attack (Chen et al. 2023, Algorithm 2):
// an attacker who gets N independent privatizations of one word guesses
// the plurality output. For each listed word it reports p0 = Pr[M(w) = w]
// and the smallest N for which the vote returns w with probability ≥
// target, with the runner-up's probability p1 and the number of possible
// outputs; a tie for the most frequent output counts as a failure. When
// another output is at least as likely as w the vote converges to it and N
// is ∞; when no N up to cap reaches the target, N is ∞ as well (the cap is
// recorded).
//
// The vote's accuracy is computed from the output distribution (exact for
// SanText and CusText, otherwise estimated from `samples` draws): by
// dynamic programming over the outputs, Pr[X_w = k and every other count
// < k], with outputs whose chance of reaching k is below 1e-12 in total
// pooled (the error bound is recorded); where that would cost more than
// 3·10⁸ steps, by 4,000 simulated votes (noted). N is searched by
// doubling and bisection, then the 8 values below the result are checked
// (ties make the accuracy fall at even N).
func queryAttack(ctx context.Context, v spec.Values, env Env) (metrics.Analysis, error) {
	var a metrics.Analysis
	rows, err := rowsOf(v.Strings("list"), env)
	if err != nil {
		return a, err
	}
	ds, method, lookups, err := distributions(ctx, env, rows, v.Int("samples"), true)
	if err != nil {
		return a, err
	}
	a.Method, a.Lookups = method, lookups
	target, limit := v.Float("target"), v.Int("cap")
	for i, w := range rows {
		word := env.Space.Emb.Words[w]
		var p0 float64
		var others []float64
		for j, o := range ds[i].outs {
			if int(o) == w {
				p0 = ds[i].p[j]
			} else if ds[i].p[j] > 0 {
				others = append(others, ds[i].p[j])
			}
		}
		slices.SortFunc(others, func(x, y float64) int { return cmp.Compare(y, x) })
		vote := newVote(p0, others, env.Seed)
		n := math.Inf(1)
		if len(others) == 0 || p0 > others[0] {
			if found, ok := vote.smallest(ctx, target, limit); ok {
				n = float64(found)
			}
		}
		if err := ctx.Err(); err != nil {
			return a, err
		}
		a.Add("p0 "+word, p0)
		a.Add("N "+word, n)
		// The runner-up and the support say why N is what it is: the vote
		// needs more queries the closer the runner-up is to p0 (for
		// CusText, p1/p0 = exp(ε(u1 − 1)/2) gives the runner-up's score).
		p1 := 0.0
		if len(others) > 0 {
			p1 = others[0]
		}
		a.Add("p1 "+word, p1)
		a.Add("outputs "+word, float64(len(others)+1))
		if vote.simulated {
			a.Notes = append(a.Notes, fmt.Sprintf("%s: vote accuracy by 4,000 simulated votes at some N (exact cost too high)", word))
		}
		if vote.bound > 0 {
			a.Notes = append(a.Notes, fmt.Sprintf("%s: pooled outputs bound the accuracy's error by %.1e", word, vote.bound))
		}
		a.Words = append(a.Words, word)
	}
	a.Add("cap", float64(limit))
	return a, nil
}

// vote computes the accuracy of a plurality vote over N draws.
type vote struct {
	p0        float64
	others    []float64 // decreasing
	lf        []float64 // log(i!)
	inv       []float64 // 1/i (inv[0] unused)
	seed      uint64
	simulated bool
	bound     float64 // largest error bound of an exact evaluation
}

func newVote(p0 float64, others []float64, seed uint64) *vote {
	return &vote{p0: p0, others: others, seed: seed}
}

func (v *vote) logFact(n int) float64 {
	for len(v.lf) <= n {
		i := len(v.lf)
		if i == 0 {
			v.lf = append(v.lf, 0)
			continue
		}
		v.lf = append(v.lf, v.lf[i-1]+math.Log(float64(i)))
	}
	return v.lf[n]
}

// binom is Pr[Bin(n, p) = k].
func (v *vote) binom(n, k int, p float64) float64 {
	switch {
	case p <= 0:
		return b2f(k == 0)
	case p >= 1:
		return b2f(k == n)
	}
	return math.Exp(v.logFact(n) - v.logFact(k) - v.logFact(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// smallest searches the fewest draws reaching target (ok false: none up
// to limit).
func (v *vote) smallest(ctx context.Context, target float64, limit int) (int, bool) {
	hit := func(n int) bool { return ctx.Err() == nil && v.accuracy(n) >= target }
	n := 1
	for !hit(n) {
		if n >= limit || ctx.Err() != nil {
			return 0, false
		}
		n = min(2*n, limit)
	}
	lo := n / 2 // misses (or 0)
	found := lo + 1 + sort.Search(n-lo, func(i int) bool { return hit(lo + 1 + i) })
	for m := found - 1; m >= max(1, found-8); m-- {
		if hit(m) {
			found = m
		}
	}
	return found, true
}

// accuracy is Pr[the word has strictly the most votes among n draws].
func (v *vote) accuracy(n int) float64 {
	q := make([]float64, len(v.others))
	rest := 1 - v.p0
	for i, p := range v.others {
		q[i] = p / rest
	}
	// Cost of the exact sum, over the k that matter.
	type term struct {
		k   int
		pk  float64
		cut int
	}
	var terms []term
	var cost, bound float64
	for k := 1; k <= n; k++ {
		pk := v.binom(n, k, v.p0)
		if pk < 1e-16 {
			bound += pk
			continue
		}
		m := n - k
		cut := len(q)
		if m >= k {
			cut = 0
			for cut < len(q) && float64(len(q)-cut)*math.Exp(v.logFact(m)-v.logFact(k)-v.logFact(m-k)+float64(k)*math.Log(q[cut])) >= 1e-12 {
				cut++
			}
			if cut < len(q) {
				bound += pk * float64(len(q)-cut) * math.Exp(v.logFact(m)-v.logFact(k)-v.logFact(m-k)+float64(k)*math.Log(q[cut]))
			}
		}
		cost += float64(cut) * float64(m+1) * float64(k)
		terms = append(terms, term{k, pk, cut})
	}
	if cost > 3e8 {
		v.simulated = true
		return v.simulate(n)
	}
	v.bound = max(v.bound, bound)
	var acc float64
	for _, t := range terms {
		acc += t.pk * v.allBelow(n-t.k, t.k, q, t.cut)
	}
	return acc
}

// allBelow is Pr[every count < k] when m draws fall among outputs with
// probabilities q (summing to 1): the first cut exactly, the others pooled
// and unconstrained.
func (v *vote) allBelow(m, k int, q []float64, cut int) float64 {
	if m < k {
		return 1
	}
	var pooled float64
	for _, x := range q[cut:] {
		pooled += x
	}
	if cut == 0 {
		return 1 // every output pooled: within the recorded bound
	}
	dp := make([]float64, m+1) // dp[t]: t draws used so far, every exact count < k
	v.binomRow(dp, m, m, pooled)
	remaining := 1 - pooled
	row := make([]float64, k)
	for i := 0; i < cut; i++ {
		next := make([]float64, m+1)
		last := i == cut-1
		share := 0.0
		if remaining > 0 {
			share = min(1, q[i]/remaining)
		}
		for t, p := range dp {
			if p == 0 {
				continue
			}
			left := m - t
			if last {
				if left < k {
					next[m] += p
				}
				continue
			}
			r := row[:min(k-1, left)+1]
			v.binomRow(r, left, len(r)-1, share)
			out := next[t : t+len(r)]
			for j, b := range r {
				out[j] += p * b
			}
		}
		dp = next
		remaining -= q[i]
	}
	return dp[m]
}

// binomRow sets row[j] = Pr[Bin(n, p) = j] for j = 0 … hi (hi ≤ n, len(row)
// = hi+1) from one term — (1−p)ⁿ where it is far from underflow, else
// binom at the mode within the row — and the ratio of neighbouring terms,
// (n−j)/(j+1)·p/(1−p), both ways. Each step adds three roundings, so a
// term j steps from the first is within about 3j·2⁻⁵³ of it relatively:
// 10⁻¹³ at the few hundred steps of the vote's rows, where binom's exp of
// log-factorials near 3·10⁴ is 10⁻¹¹ off (TestBinomRow). Terms that
// underflow stay 0 as binom's do. A step costs three products where
// binom costs an exp and two logs, and the vote's dynamic programme is
// little but these steps.
func (v *vote) binomRow(row []float64, n, hi int, p float64) {
	clear(row)
	switch {
	case p <= 0:
		row[0] = 1
		return
	case p >= 1:
		if hi == n {
			row[n] = 1
		}
		return
	}
	v.logFact(n)
	for len(v.inv) <= n {
		v.inv = append(v.inv, 1/float64(len(v.inv)))
	}
	up, down := p/(1-p), (1-p)/p
	mode := min(max(int(float64(n+1)*p), 0), hi)
	if l0 := float64(n) * math.Log1p(-p); l0 > -600 {
		mode, row[0] = 0, math.Exp(l0) // (1−p)^n, exact to n·p·2⁻⁵³
	} else {
		row[mode] = v.binom(n, mode, p)
	}
	for j := mode; j < hi; j++ {
		row[j+1] = row[j] * float64(n-j) * v.inv[j+1] * up
	}
	for j := mode; j > 0; j-- {
		row[j-1] = row[j] * float64(j) * v.inv[n-j+1] * down
	}
}

// simulate estimates the accuracy from 4,000 votes of n draws.
func (v *vote) simulate(n int) float64 {
	if len(v.others) == 0 {
		return 1
	}
	cdf := make([]float64, len(v.others)+1)
	cdf[0] = v.p0
	for i, p := range v.others {
		cdf[i+1] = cdf[i] + p
	}
	r := rand.New(rand.NewPCG(rng.SplitMix64(v.seed^uint64(n)), rng.SplitMix64(uint64(n))))
	const trials = 4000
	wins := 0
	counts := make([]int, len(cdf))
	for range trials {
		clear(counts)
		for range n {
			u := r.Float64() * cdf[len(cdf)-1]
			counts[min(sort.SearchFloat64s(cdf, u), len(cdf)-1)]++
		}
		if counts[0] > slices.Max(counts[1:]) {
			wins++
		}
	}
	return float64(wins) / trials
}
