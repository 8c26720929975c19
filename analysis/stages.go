package analysis

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/xp-nlp/xp/metrics"
)

// Point is one mechanism setting's statistics at one ε: what the select
// stage chooses among.
type Point struct {
	Setting string
	Epsilon float64
	Stats   map[string]float64
	// Start marks the setting Algorithm 2 starts from: Vickrey at t = 0,
	// which is the multivariate Laplace mechanism (a mechanism without t
	// is its own start).
	Start bool
}

// Selection is the outcome of SelectPaper.
type Selection struct {
	// Best is the index of the point chosen (−1 when none).
	Best int
	// Epsilon is the ε at which the start setting's loss first fell
	// below the budget (0 when it never did), Steps the start setting's ε
	// tried up to it, in increasing order.
	Epsilon float64
	Steps   []float64
	// Scanned counts the points at Epsilon, Feasible those within the
	// budget.
	Scanned, Feasible int
	// Why says, when Best is −1, what stopped the procedure.
	Why string
}

// SelectPaper is Xu et al.'s Algorithm 2 (2021, §5) as the paper states
// it: start from Laplace (t = 0) at the smallest ε and double ε until the
// start setting's loss is below the budget C; at that ε, scan the
// settings (t = 0.05, 0.10, …, 1) and keep the one with the largest
// privacy statistic whose loss is at most C (the start setting itself
// when no other is). Over a grid already computed, "doubling" walks the
// start setting's ε in increasing order: the grid's ε should be ε0·2^k
// for the result to be the paper's (the select stage says when they are
// not). Ties go to the earlier point. Points lacking either statistic, or
// with an undefined value, are skipped.
func SelectPaper(points []Point, privacy, loss string, budget float64) Selection {
	sel := Selection{Best: -1}
	usable := func(p Point) bool {
		pv, okp := p.Stats[privacy]
		lv, okl := p.Stats[loss]
		return okp && okl && !math.IsNaN(pv) && !math.IsNaN(lv)
	}
	var start []int
	for i, p := range points {
		if p.Start && usable(p) {
			start = append(start, i)
		}
	}
	if len(start) == 0 {
		sel.Why = "no start setting (t = 0, Laplace) among the points"
		return sel
	}
	slices.SortStableFunc(start, func(a, b int) int { return cmp.Compare(points[a].Epsilon, points[b].Epsilon) })
	for _, i := range start {
		sel.Steps = append(sel.Steps, points[i].Epsilon)
		if points[i].Stats[loss] < budget {
			sel.Epsilon = points[i].Epsilon
			break
		}
	}
	if sel.Epsilon == 0 {
		sel.Why = fmt.Sprintf("the start setting's %s is not below %g at any ε up to %g: the paper doubles ε further", loss, budget, sel.Steps[len(sel.Steps)-1])
		return sel
	}
	for i, p := range points {
		if p.Epsilon != sel.Epsilon || !usable(p) {
			continue
		}
		sel.Scanned++
		if p.Stats[loss] > budget {
			continue
		}
		sel.Feasible++
		if sel.Best < 0 || p.Stats[privacy] > points[sel.Best].Stats[privacy] {
			sel.Best = i
		}
	}
	return sel
}

// Select is the grid alternative to Algorithm 2 (SelectPaper): among
// every point of the grid whose loss is at most budget, the one with the
// largest privacy statistic (ties: the smaller ε, then the earlier
// point). It returns the index of the point chosen (−1 when none is
// within budget) and how many are. Points lacking either statistic, or
// with an undefined value, are not candidates.
func Select(points []Point, privacy, loss string, budget float64) (best, feasible int) {
	best = -1
	for i, p := range points {
		pv, okp := p.Stats[privacy]
		lv, okl := p.Stats[loss]
		if !okp || !okl || math.IsNaN(pv) || math.IsNaN(lv) || lv > budget {
			continue
		}
		feasible++
		if best < 0 {
			best = i
			continue
		}
		b := points[best]
		if pv > b.Stats[privacy] || (pv == b.Stats[privacy] && p.Epsilon < b.Epsilon) {
			best = i
		}
	}
	return best, feasible
}

// Probe is one ε tried by SearchEpsilon and the value found there.
type Probe struct {
	Epsilon, Value float64
}

// SearchEpsilon finds an ε in [lo, hi] at which f — a statistic that
// grows with ε, such as the mean N_w share — is within tol·target of
// target. It brackets the target first: from the middle of [lo, hi] on
// a log scale it steps by factors of bracketStep towards the target,
// clamped to the range, until two probes lie on either side (the range's
// ends are probed only where the target lies beyond every probe before
// them); then it bisects the bracket on log ε. It stops after probes
// evaluations of f; ok is false when the target lies outside [f(lo),
// f(hi)] or was not reached within tolerance, and eps is then the
// closest probe. Every probe is returned, in order.
func SearchEpsilon(ctx context.Context, target, lo, hi, tol float64, probes int, f func(eps float64) (float64, error)) (eps, value float64, trace []Probe, ok bool, err error) {
	try := func(e float64) (float64, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		v, err := f(e)
		if err == nil {
			trace = append(trace, Probe{e, v})
		}
		return v, err
	}
	closest := func() (float64, float64) {
		b := trace[0]
		for _, p := range trace[1:] {
			if math.Abs(p.Value-target) < math.Abs(b.Value-target) {
				b = p
			}
		}
		return b.Epsilon, b.Value
	}
	within := func(v float64) bool { return math.Abs(v-target) <= tol*target }
	done := func() (float64, float64, []Probe, bool, error) {
		e, v := closest()
		return e, v, trace, within(v), nil
	}
	// Bracket: a < target ≤ b in f, found stepping from the middle.
	x := math.Sqrt(lo * hi)
	var a, b float64 // 0: no probe on that side yet
	for len(trace) < max(1, probes) {
		v, err := try(x)
		if err != nil {
			return 0, 0, trace, false, err
		}
		if within(v) {
			return x, v, trace, true, nil
		}
		if v < target {
			a = x
			if b != 0 || x >= hi {
				break
			}
			x = min(hi, x*bracketStep)
		} else {
			b = x
			if a != 0 || x <= lo {
				break
			}
			x = max(lo, x/bracketStep)
		}
	}
	if a == 0 || b == 0 {
		return done() // beyond the range, or out of probes
	}
	for len(trace) < probes {
		mid := math.Sqrt(a * b)
		v, err := try(mid)
		if err != nil {
			return 0, 0, trace, false, err
		}
		if within(v) {
			return mid, v, trace, true, nil
		}
		if v < target {
			a = mid
		} else {
			b = mid
		}
	}
	return done()
}

// bracketStep is the factor by which SearchEpsilon steps ε from the
// middle of its range until its probes bracket the target: a decade.
const bracketStep = 10

// Bracket is the interval of ε a search's probes leave open around the
// ε at which f reaches target: the largest probed ε whose value is below
// target and the smallest whose value is above (a side without such a
// probe is eps itself, the probe returned). For a statistic that grows
// with ε, the exact crossing lies in it.
func Bracket(trace []Probe, target, eps float64) (lo, hi float64) {
	lo, hi = eps, eps
	below, above := math.Inf(-1), math.Inf(1)
	for _, p := range trace {
		switch {
		case p.Value < target && p.Epsilon > below:
			below = p.Epsilon
		case p.Value > target && p.Epsilon < above:
			above = p.Epsilon
		}
	}
	if !math.IsInf(below, -1) {
		lo = min(lo, below)
	}
	if !math.IsInf(above, 1) {
		hi = max(hi, above)
	}
	return lo, hi
}

// UtilityLoss is the utility-loss stage's statistics for one analysis
// cell (Xu et al. 2021: the utility loss of a sentence dataset): the
// analysis's E_M (left out when NaN: it has none), and per apply mode
// L_M = the baseline's test accuracy minus the accuracy with the
// mechanism applied in that mode (accuracy[k] for modes[k]), then the
// accuracies themselves.
func UtilityLoss(em, baseline float64, modes []string, accuracy []float64) metrics.Analysis {
	var a metrics.Analysis
	a.Method = "baseline accuracy − accuracy with the mechanism applied (test split)"
	if !math.IsNaN(em) {
		a.Add("E_M", em)
	}
	for k, m := range modes {
		a.Add("L_M "+m, baseline-accuracy[k])
	}
	for k, m := range modes {
		a.Add("accuracy "+m, accuracy[k])
	}
	a.Add("baseline accuracy", baseline)
	return a
}
