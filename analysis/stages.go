package analysis

import (
	"context"
	"math"
)

// Point is one mechanism setting's statistics at one ε: what the select
// stage chooses among.
type Point struct {
	Setting string
	Epsilon float64
	Stats   map[string]float64
}

// Select is Xu et al.'s Algorithm 2 (2021, §5) over a grid already
// computed: among the points whose loss is at most budget, the one with
// the largest privacy statistic (ties: the smaller ε, then the earlier
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
// target, by bisection on log ε. It stops after probes evaluations of f;
// ok is false when the target lies outside [f(lo), f(hi)] or was not
// reached within tolerance, and eps is then the closest probe. Every
// probe is returned, in order.
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
	vlo, err := try(lo)
	if err != nil {
		return 0, 0, trace, false, err
	}
	if within(vlo) || vlo > target || probes < 2 {
		e, v := closest()
		return e, v, trace, within(v), nil
	}
	vhi, err := try(hi)
	if err != nil {
		return 0, 0, trace, false, err
	}
	if within(vhi) || vhi < target {
		e, v := closest()
		return e, v, trace, within(v), nil
	}
	for len(trace) < probes {
		mid := math.Sqrt(lo * hi)
		v, err := try(mid)
		if err != nil {
			return 0, 0, trace, false, err
		}
		if within(v) {
			return mid, v, trace, true, nil
		}
		if v < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	e, v := closest()
	return e, v, trace, within(v), nil
}
