package runner

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/xp-nlp/xp/analysis"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/results"
)

// selectStage: Xu et al.'s Algorithm 2 over the records and the results
// of the stages before it (stageKind).
var selectStage = stageKind{name: "select",
	jobs: func(_ *Session, in stageInputs) []stageJob {
		return selectJobs(in.c, in.i, append(slices.Clone(in.cells), in.done...))
	}}

// selectJobs run Algorithm 2 per mechanism and seed over the records that
// carry both the privacy and the loss statistic.
func selectJobs(c *experiments.Config, i int, recs []results.Record) []stageJob {
	v := c.StageParams(i)
	privacy, loss, budget, paper := v.String("privacy"), v.String("loss"), v.Float("budget"), v.String("procedure") == "paper"
	type group struct {
		mech string
		seed uint64
	}
	groups := map[group][]results.Record{}
	var order []group
	// The records that carry the loss: the analysis cells for the
	// lexicon's L_M, the utility-loss results for an accuracy drop. A
	// failed one fails its group's selection (a choice made without it
	// could be wrong).
	from := "utility-loss"
	if loss == "L_M flip" || loss == "L_M loss" {
		from = c.Analysis.Kind
	}
	for _, r := range recs {
		if r.Cell.Mechanism == "" || r.Cell.Analysis != from {
			continue
		}
		g := group{r.Cell.Mechanism, r.Cell.Seed}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], r)
	}
	var jobs []stageJob
	for _, g := range order {
		inputs := groups[g]
		jobs = append(jobs, stageJob{cell: experiments.Cell{Analysis: "select", Mechanism: g.mech, Seed: g.seed}, inputs: inputs,
			compute: func(context.Context) (metrics.Analysis, error) {
				pts := make([]analysis.Point, len(inputs))
				for k, r := range inputs {
					pts[k] = analysis.Point{Setting: r.Cell.Setting(), Epsilon: r.Cell.Epsilon, Stats: map[string]float64{}, Start: experiments.IsStart(r.Cell)}
					for _, st := range r.Analysis.Stats {
						pts[k].Stats[st.Name] = float64(st.Value)
					}
				}
				var a metrics.Analysis
				a.Add("budget", budget)
				var best int
				if paper {
					sel := analysis.SelectPaper(pts, privacy, loss, budget)
					a.Method = fmt.Sprintf("Algorithm 2 as published: ε doubled on t = 0 (Laplace) until %s < %g, then the largest %s with %s ≤ %g at that ε", loss, budget, privacy, loss, budget)
					a.Add("feasible", float64(sel.Feasible))
					a.Add("scanned", float64(sel.Scanned))
					if !doubling(sel.Steps) {
						a.Notes = append(a.Notes, fmt.Sprintf("the start setting's ε (%v) are not ε0·2^k: the procedure walked the grid's ε, not the paper's doubling", sel.Steps))
					}
					if sel.Best < 0 {
						a.Notes = append(a.Notes, fmt.Sprintf("%s: %s", g.mech, cmp.Or(sel.Why, fmt.Sprintf("no setting at ε %g has %s ≤ %g", sel.Epsilon, loss, budget))))
						return a, nil
					}
					best = sel.Best
				} else {
					var feasible int
					best, feasible = analysis.Select(pts, privacy, loss, budget)
					a.Method = fmt.Sprintf("grid arg-max (not Algorithm 2's procedure): largest %s with %s ≤ %g over %d settings × ε", privacy, loss, budget, len(pts))
					a.Add("feasible", float64(feasible))
					if best < 0 {
						a.Notes = append(a.Notes, fmt.Sprintf("no setting of %s has %s ≤ %g", g.mech, loss, budget))
						return a, nil
					}
				}
				r := inputs[best]
				a.Add(privacy, pts[best].Stats[privacy])
				a.Add(loss, pts[best].Stats[loss])
				a.Add("ε", r.Cell.Epsilon)
				for _, k := range slices.Sorted(maps.Keys(r.Cell.Params)) {
					if x, ok := r.Cell.Params[k].(float64); ok {
						a.Add(k, x)
					} else if n, ok := r.Cell.Params[k].(int); ok {
						a.Add(k, float64(n))
					}
				}
				a.Notes = append(a.Notes, fmt.Sprintf("seed %d chose %s ε=%g", g.seed, pts[best].Setting, r.Cell.Epsilon))
				return a, nil
			}})
	}
	return jobs
}

// doubling reports whether each ε is twice the one before (Algorithm 2's
// steps), to a relative 1e-9.
func doubling(eps []float64) bool {
	for i := 1; i < len(eps); i++ {
		if math.Abs(eps[i]/eps[i-1]-2) > 1e-9 {
			return false
		}
	}
	return true
}
