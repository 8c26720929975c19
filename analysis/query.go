package analysis

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"

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
// 3·10⁸ steps, by 20,000 simulated votes (noted; one pass over each
// simulated sequence of draws serves every N). N is searched by
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
		if vote.simulated { // N's Monte Carlo interval
			lo, hi := vote.interval(ctx, target, limit)
			if err := ctx.Err(); err != nil {
				return a, err
			}
			a.AddSimulated("N "+word, n, lo, hi)
		} else {
			a.Add("N "+word, n)
		}
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
			a.Notes = append(a.Notes, fmt.Sprintf("%s: vote accuracy by 20,000 simulated votes at some N (exact cost too high): N is an estimate, its interval from the simulated accuracies' 95%% intervals", word))
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
	wins      []int64         // simulated: wins[n] of voteTrials votes over n draws
	limit     int             // the search's largest n (0: unknown)
	ctx       context.Context // stops a simulation (nil: never)
	bound     float64         // largest error bound of an exact evaluation
	// maxCost is the cost above which an accuracy is simulated (0:
	// 3·10⁸ steps); z shifts every simulated accuracy by z standard
	// errors (interval's searches; 0 otherwise); exact keeps the exact
	// accuracies computed, by n, for those searches.
	maxCost float64
	z       float64
	exact   map[int]float64
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
	v.ctx, v.limit = ctx, limit
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
	if cost > cmp.Or(v.maxCost, 3e8) {
		v.simulated = true
		p := v.simulate(n)
		return p + v.z*math.Sqrt(max(p*(1-p), 1.0/voteTrials)/voteTrials)
	}
	if acc, ok := v.exact[n]; ok {
		return acc
	}
	v.bound = max(v.bound, bound)
	var acc float64
	for _, t := range terms {
		acc += t.pk * v.allBelow(n-t.k, t.k, q, t.cut)
	}
	if v.exact == nil {
		v.exact = map[int]float64{}
	}
	v.exact[n] = acc
	return acc
}

// interval is the range of N that the simulated accuracies' sampling
// error leaves open: the search again with every simulated accuracy taken
// 1.96 standard errors up (lo) and down (hi; +Inf where that never
// reaches target by limit). Each accuracy's interval is a pointwise 95%
// one, not a band over every n. Where no accuracy was simulated both are
// the search's N.
func (v *vote) interval(ctx context.Context, target float64, limit int) (lo, hi float64) {
	defer func() { v.z = 0 }()
	lo, hi = math.Inf(1), math.Inf(1)
	v.z = 1.96
	if n, ok := v.smallest(ctx, target, limit); ok {
		lo = float64(n)
	}
	v.z = -1.96
	if n, ok := v.smallest(ctx, target, limit); ok {
		hi = float64(n)
	}
	return lo, hi
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
	v.binomRow(dp, m, m, pooled, 0)
	v.growInv(m)
	inv := v.inv
	remaining := 1 - pooled
	row := make([]float64, k)
	for i := 0; i < cut; i++ {
		next := make([]float64, m+1)
		last := i == cut-1
		share := 0.0
		if remaining > 0 {
			share = min(1, q[i]/remaining)
		}
		// Each row starts from (1−share)^left: an exp every 32 draws,
		// products by 1/(1−share) between (64 roundings at most).
		lq, grow, up := math.Log1p(-share), 1/(1-share), share/(1-share)
		first, firstLeft, exact := 0.0, -1, -1
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
			if share > 0 && share < 1 {
				if firstLeft < 0 || exact-left >= 32 {
					first, firstLeft, exact = 0, left, left
					if l0 := float64(left) * lq; l0 > -600 {
						first = math.Exp(l0)
					}
				}
				for ; firstLeft > left; firstLeft-- {
					first *= grow
				}
			}
			hi := min(k-1, left)
			out := next[t : t+hi+1]
			if first > 0 {
				// binomRow's terms from (1−share)^left, made and used in one pass.
				b := first
				out[0] += p * b
				for j := 0; j < hi; j++ {
					b = b * float64(left-j) * inv[j+1] * up
					out[j+1] += p * b
				}
				continue
			}
			r := row[:hi+1]
			v.binomRow(r, left, hi, share, 0)
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
// = hi+1) from one term — (1−p)ⁿ where it is far from underflow (first,
// where the caller has it, else computed), else binom at the mode within
// the row — and the ratio of neighbouring terms,
// (n−j)/(j+1)·p/(1−p), both ways. Each step adds three roundings, so a
// term j steps from the first is within about 3j·2⁻⁵³ of it relatively:
// 10⁻¹³ at the few hundred steps of the vote's rows, where binom's exp of
// log-factorials near 3·10⁴ is 10⁻¹¹ off (TestBinomRow). Terms that
// underflow stay 0 as binom's do. A step costs three products where
// binom costs an exp and two logs, and the vote's dynamic programme is
// little but these steps.
func (v *vote) binomRow(row []float64, n, hi int, p, first float64) {
	switch {
	case p <= 0:
		clear(row)
		row[0] = 1
		return
	case p >= 1:
		clear(row)
		if hi == n {
			row[n] = 1
		}
		return
	}
	v.logFact(n)
	v.growInv(n)
	up, down := p/(1-p), (1-p)/p
	mode := min(max(int(float64(n+1)*p), 0), hi)
	if first > 0 {
		mode, row[0] = 0, first
	} else if l0 := float64(n) * math.Log1p(-p); l0 > -600 {
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

// growInv makes v.inv[i] = 1/i for i ≤ n.
func (v *vote) growInv(n int) {
	for len(v.inv) <= n {
		v.inv = append(v.inv, 1/float64(len(v.inv)))
	}
}

// voteTrials is the number of simulated votes behind an accuracy the
// dynamic programme cannot afford: its standard error at the target 0.95
// is 0.0015.
const voteTrials = 20000

// simulate estimates the accuracy at n from voteTrials simulated votes.
// Trial i is a sequence of independent draws from the word's output
// distribution, from its own stream (the seed and i), and its vote at n
// is over the sequence's first n draws: one pass over each sequence
// gives every n the search asks (common random numbers: neighbouring n
// are judged on the same votes), and no estimate depends on how far the
// sequences were run or on how many cores ran them.
func (v *vote) simulate(n int) float64 {
	if len(v.others) == 0 {
		return 1
	}
	if n >= len(v.wins) {
		top := max(n, 2*(len(v.wins)-1))
		if v.limit > 0 {
			top = max(n, min(top, v.limit))
		}
		v.wins = simulateVotes(v.ctx, v.p0, v.others, v.seed, top)
	}
	return float64(v.wins[n]) / voteTrials
}

// simulateVotes returns wins[n], the number of voteTrials trials whose
// first n draws put output 0 (probability p0) strictly ahead of every
// other output, for n = 0 … top. Cancelling ctx stops it early (the
// counts are then short).
func simulateVotes(ctx context.Context, p0 float64, others []float64, seed uint64, top int) []int64 {
	cdf := make([]float64, len(others)+1)
	cdf[0] = p0
	for i, p := range others {
		cdf[i+1] = cdf[i] + p
	}
	total, last := cdf[len(cdf)-1], len(cdf)-1
	// guide[g] starts the search for u in [g, g+1)·total/G: the smallest i
	// with cdf[i] ≥ u found from there in a step or two on average, the
	// same i as a binary search over cdf finds. Four buckets an output:
	// fewer steps, fewer mispredicted branches than one, the table still
	// within L2.
	guide := make([]int32, 4*len(cdf))
	var at int32
	for g := range guide {
		lo := total * float64(g) / float64(len(guide))
		for int(at) < last && cdf[at] < lo {
			at++
		}
		guide[g] = at
	}
	workers := min(runtime.GOMAXPROCS(0), voteTrials)
	part := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wins := make([]int64, top+1)
			counts := make([]int32, len(cdf))
			var touched []int32
			for trial, done := w, 0; trial < voteTrials; trial, done = trial+workers, done+1 {
				if done%64 == 0 && ctx != nil && ctx.Err() != nil {
					break
				}
				r := rand.NewPCG(rng.SplitMix64(seed^0x766f7465), rng.SplitMix64(uint64(trial)))
				var lead, most int32
				for d := 1; d <= top; d++ {
					f := float64(r.Uint64()<<11>>11) / (1 << 53) // rand.Float64's, without the interface call
					u := f * total
					i := guide[min(int(f*float64(len(guide))), len(guide)-1)]
					for i > 0 && cdf[i-1] >= u {
						i--
					}
					for int(i) < last && cdf[i] < u {
						i++
					}
					if counts[i] == 0 {
						touched = append(touched, i)
					}
					counts[i]++
					if i == 0 {
						lead++
					} else if counts[i] > most {
						most = counts[i]
					}
					if lead > most {
						wins[d]++
					}
				}
				for _, i := range touched {
					counts[i] = 0
				}
				touched = touched[:0]
			}
			part[w] = wins
		}()
	}
	wg.Wait()
	wins := part[0]
	for _, p := range part[1:] {
		for n, x := range p {
			wins[n] += x
		}
	}
	return wins
}

// queryAttackKind registers the query-attack analysis (kind).
var queryAttackKind = kind{name: "query-attack", run: queryAttack,
	plan: func(v spec.Values, env Env) (Work, error) {
		rows, err := rowsOf(v.Strings("list"), env)
		return Work{Rows: len(rows), Draws: v.Int("samples"), Varies: "the vote's cost grows with the queries N each word needs, which its own probability at the cell's ε sets"}, err
	}}
