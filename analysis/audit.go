package analysis

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// bounder is implemented by every mechanism of package mech: the bound its
// guarantee puts on ln Pr[M(x) = y] − ln Pr[M(x′) = y] for inputs x, x′
// (+Inf where it promises nothing; a no-guarantee variant states the
// bound of the mechanism it varies).
type bounder interface {
	Bound(x, x2 int) float64
}

// logProber is implemented by mechanisms whose exact log-probabilities
// are known where the probabilities underflow (mech.Diffractor: e^{−ε·k}
// over tens of thousands of positions); the exact audit then compares
// those.
type logProber interface {
	LogProb(x, y int) float64
}

// ceilinged is implemented by mechanisms that know an exact upper bound
// on ln Pr[M(x) = y] without knowing the probability (mech.Gumbel: y is
// reachable only through the input's k nearest words, k Poisson); the
// sampled audit takes the smaller of it and the draws' upper bound.
type ceilinged interface {
	LogProbCeiling(x, y int) float64
}

// peered is implemented by mechanisms whose guarantee relates each input
// to a few others only (mech.CusText: the inputs sharing its output
// set): the audit then adds each sampled word's peers, so that sampled
// words of different sets still give pairs.
type peered interface {
	Peers(x int) []int
}

// auditLevel is the simultaneous confidence of a sampled audit's lower
// bounds.
const auditLevel = 0.95

// audit is the privacy audit (dp-audit): over every ordered pair (x, x′)
// of the sampled words with a finite bound B(x, x′) and every output y of
// x, the privacy loss L = ln Pr[M(x) = y] − ln Pr[M(x′) = y] against B.
// It records the pairs audited, the largest excess L − B, the largest
// L/B (how much of the bound the mechanism uses), and the ordered pairs
// with a violation (L > B). With the output distribution known the loss
// is exact (log-probabilities where the mechanism gives them: no
// underflow) and a violation is L − B > 10⁻⁹·max(1, B) (rounding). From
// draws, L's point estimate is infinite wherever y was never drawn from
// x′ (the recorded estimates take only the outputs drawn from both), so
// a violation needs confidence: each probability gets a one-sided
// Clopper–Pearson bound at level 0.05/(2K) for K comparisons
// (Bonferroni), so that every comparison's lower bound on L − B holds
// together with probability ≥ 95%, and a violation is a lower bound
// above 0. Where the mechanism knows an exact upper bound on a
// probability (ceilinged) the smaller of the two bounds is taken. The
// largest lower bound is recorded beside the point estimate.
func audit(ctx context.Context, v spec.Values, env Env) (metrics.Analysis, error) {
	var a metrics.Analysis
	b, ok := env.Mech.(bounder)
	if !ok {
		return a, fmt.Errorf("mechanism %s states no bound", env.Mech.Name())
	}
	rows, err := sampleWords(v, env)
	if err != nil {
		return a, err
	}
	if p, ok := env.Mech.(peered); ok {
		seen := map[int]bool{}
		var all []int
		for _, w := range rows {
			for _, r := range append([]int{w}, p.Peers(w)...) {
				if !seen[r] {
					seen[r] = true
					all = append(all, r)
				}
			}
		}
		rows = all
	}
	m := v.Int("draws")
	ds, method, lookups, err := distributions(ctx, env, rows, m, v.Bool("exact"))
	if err != nil {
		return a, err
	}
	a.Method, a.Lookups = method, lookups
	exact := method == "exact"
	prob := make([]map[int32]float64, len(rows))
	for i, d := range ds {
		prob[i] = make(map[int32]float64, len(d.outs))
		for j, o := range d.outs {
			prob[i][o] = d.p[j]
		}
	}
	bound := make([][]float64, len(rows))
	comparisons := 0
	for i := range rows {
		bound[i] = make([]float64, len(rows))
		for j := range rows {
			bound[i][j] = math.Inf(1)
			if i != j {
				bound[i][j] = b.Bound(rows[i], rows[j])
			}
			if math.IsNaN(bound[i][j]) { // e.g. a singular Mahalanobis Σ_p
				return a, fmt.Errorf("%s states no number as the bound between %q and %q", env.Mech.Name(), env.Space.Emb.Words[rows[i]], env.Space.Emb.Words[rows[j]])
			}
			if !math.IsInf(bound[i][j], 1) {
				comparisons += len(ds[i].outs)
			}
		}
	}
	logProb, _ := env.Mech.(logProber)
	if !exact {
		logProb = nil // draws estimate probabilities: no closed form to read
	}
	cp := newClopperPearson(m, (1-auditLevel)/float64(2*max(1, comparisons)))
	ceiling, _ := env.Mech.(ceilinged)
	pairs, violations := 0, 0
	worst, worstRatio, worstLow := math.Inf(-1), math.Inf(-1), math.Inf(-1)
	for i := range rows {
		if err := ctx.Err(); err != nil {
			return a, err
		}
		for j := range rows {
			B := bound[i][j]
			if math.IsInf(B, 1) {
				continue
			}
			pairs++
			violated := false
			for k, y := range ds[i].outs {
				p, q := ds[i].p[k], prob[j][y]
				var lp, lq float64
				if logProb != nil {
					lp, lq = logProb.LogProb(rows[i], int(y)), logProb.LogProb(rows[j], int(y))
				} else {
					lp, lq = math.Log(p), math.Log(q)
				}
				if math.IsInf(lp, -1) {
					continue
				}
				loss := lp - lq
				if exact || q > 0 {
					worst = math.Max(worst, loss-B)
					if B > 0 {
						worstRatio = math.Max(worstRatio, loss/B)
					}
				}
				if exact {
					violated = violated || loss-B > 1e-9*math.Max(1, B)
					continue
				}
				upper := math.Log(cp.upper(q))
				if ceiling != nil {
					upper = math.Min(upper, ceiling.LogProbCeiling(rows[j], int(y)))
				}
				low := math.Log(cp.lower(p)) - upper - B
				worstLow = math.Max(worstLow, low)
				violated = violated || low > 0
			}
			if violated {
				violations++
			}
		}
	}
	for _, w := range rows {
		a.Words = append(a.Words, env.Space.Emb.Words[w])
	}
	a.Add("pairs", float64(pairs))
	a.Add("violations", float64(violations))
	a.Add("max loss − bound", nanIfNone(worst, pairs))
	a.Add("max loss / bound", nanIfNone(worstRatio, pairs))
	if !exact {
		a.Add("max loss − bound, 95% low", nanIfNone(worstLow, pairs))
	}
	notion := env.Mech.Notion()
	switch {
	case pairs == 0:
		a.Notes = append(a.Notes, "no pair of the sampled words has a finite bound (CusText: no two share an output set)")
	case violations > 0 && notion == spec.NoDP:
		a.Notes = append(a.Notes, fmt.Sprintf("%d of %d ordered pairs exceed the bound of the mechanism this variant departs from: expected, it reports no guarantee", violations, pairs))
	case violations > 0:
		a.Notes = append(a.Notes, fmt.Sprintf("VIOLATION: %d of %d ordered pairs exceed the bound the %s guarantee states", violations, pairs, notion))
	}
	return a, nil
}

func nanIfNone(x float64, pairs int) float64 {
	if pairs == 0 || math.IsInf(x, -1) {
		return math.NaN()
	}
	return x
}

// clopperPearson gives one-sided exact binomial bounds at level alpha for
// the probabilities c/n of n draws, memoised by count.
type clopperPearson struct {
	n      int
	alpha  float64
	lo, hi map[int]float64
}

func newClopperPearson(n int, alpha float64) *clopperPearson {
	return &clopperPearson{n: n, alpha: alpha, lo: map[int]float64{}, hi: map[int]float64{}}
}

// lower is the lower bound on a probability estimated as p = c/n.
func (c *clopperPearson) lower(p float64) float64 {
	k := int(math.Round(p * float64(c.n)))
	if k == 0 {
		return 0
	}
	if v, ok := c.lo[k]; ok {
		return v
	}
	v := distuv.Beta{Alpha: float64(k), Beta: float64(c.n - k + 1)}.Quantile(c.alpha)
	c.lo[k] = v
	return v
}

// upper is the upper bound on a probability estimated as p = c/n.
func (c *clopperPearson) upper(p float64) float64 {
	k := int(math.Round(p * float64(c.n)))
	if k >= c.n {
		return 1
	}
	if v, ok := c.hi[k]; ok {
		return v
	}
	v := distuv.Beta{Alpha: float64(k + 1), Beta: float64(c.n - k)}.Quantile(1 - c.alpha)
	c.hi[k] = v
	return v
}

// auditKind registers the dp-audit analysis (kind).
// (CusText's cells also take each sampled word's set-mates, known once
// the mapping is built: more rows than planned.)
var auditKind = kind{name: "dp-audit", run: audit,
	plan: func(v spec.Values, env Env) (Work, error) {
		rows, err := sampleWords(v, env)
		return Work{Rows: len(rows), Draws: v.Int("draws")}, err
	}}
