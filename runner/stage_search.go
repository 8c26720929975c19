package runner

import (
	"context"
	"fmt"
	"strconv"

	"github.com/xp-nlp/xp/analysis"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/metrics"
)

// searchStage: the ε of each target mean N_w (stageKind). A result's
// work is the draws its probes make: targets × words × (probes × draws
// + the examples' draws), probes estimated by searchProbes; unmeasured,
// they are priced at the mechanism's privatization rate (none for an
// exact mechanism: its N_w is a distribution per word, no draws).
var searchStage = stageKind{name: "epsilon-search", lookups: true,
	jobs: func(s *Session, in stageInputs) []stageJob { return s.searchJobs(in) },
	work: func(s *Session, i int, _ experiments.Cell) int64 {
		v := s.c.StageParams(i)
		probes := int64(searchProbes(v.Float("lo"), v.Float("hi"), v.Int("probes")))
		words := int64(len(s.c.AnalysisParams().Strings("list")))
		return int64(len(v.Floats("targets"))) * words * (probes*int64(v.Int("draws")) + int64(s.c.AnalysisParams().Int("draws")))
	},
	price: func(x *estimator, g stageGroup) {
		if !mech.Exact(g.cell.Mechanism) {
			priv, _ := x.s.rates.keys(g.cell, x.threads)
			x.price(priv, g.units, x.s.rates.sameSearch(g.cell, false)...)
		}
	}}

// searchJobs find, per mechanism setting and seed of the examples cells,
// the ε giving each target mean N_w over the examples' words, and show
// the examples there (Feyisetan et al. 2020, Table 1).
func (s *Session) searchJobs(in stageInputs) []stageJob {
	c := in.c
	v := c.StageParams(in.i)
	words := c.AnalysisParams().Strings("list")
	var jobs []stageJob
	for _, inputs := range in.groups("examples").groups {
		cell := inputs[0].Cell
		cell.Analysis, cell.Epsilon = "epsilon-search", 0
		jobs = append(jobs, stageJob{cell: cell, inputs: inputs, compute: func(ctx context.Context) (metrics.Analysis, error) {
			var a metrics.Analysis
			draws := v.Int("draws")
			a.Method = fmt.Sprintf("search on log ε over [%g, %g] (bracketed from the middle by decades, then bisected); mean N_w from %d draws per word of %d words", v.Float("lo"), v.Float("hi"), draws, len(words))
			a.Examples = map[string][]string{}
			for _, target := range v.Floats("targets") {
				nw := func(eps float64) (float64, error) {
					probe := cell
					probe.Analysis, probe.Epsilon = "plausible-deniability", eps
					env, _, err := s.an.analysisEnv(probe)
					if err != nil {
						return 0, err
					}
					res, err := analysis.Run(ctx, probe.Analysis, map[string]any{"from": "list", "list": words, "draws": draws}, env)
					a.Lookups += res.Lookups
					return res.Stat("N_w %") / 100, err
				}
				eps, got, trace, ok, err := analysis.SearchEpsilon(ctx, target, v.Float("lo"), v.Float("hi"), v.Float("tolerance"), v.Int("probes"), nw)
				if err != nil {
					return a, err
				}
				t := strconv.FormatFloat(target, 'g', -1, 64)
				lo, hi := analysis.Bracket(trace, target, eps)
				a.AddBracket("ε @ N_w "+t, eps, lo, hi)
				a.Add("N_w share @ "+t, got)
				a.Add("probes @ "+t, float64(len(trace)))
				if !ok {
					a.Notes = append(a.Notes, fmt.Sprintf("target N_w %s not reached within tolerance in [%g, %g] after %d probes: closest %.4g at ε %.4g", t, v.Float("lo"), v.Float("hi"), len(trace), got, eps))
					a.Flag("target N_w " + t + " not reached")
				}
				if eps == v.Float("lo") || eps == v.Float("hi") {
					a.Flag(fmt.Sprintf("N_w %s: stopped at the range's end (ε %g)", t, eps))
				}
				at := cell
				at.Analysis, at.Epsilon = "examples", eps
				env, _, err := s.an.analysisEnv(at)
				if err != nil {
					return a, err
				}
				ex, err := analysis.Run(ctx, "examples", c.Analysis.Params, env)
				if err != nil {
					return a, err
				}
				a.Lookups += ex.Lookups
				for w, outs := range ex.Examples {
					a.Examples[fmt.Sprintf("%s @ N_w %s (ε %.4g)", w, t, eps)] = outs
				}
			}
			return a, nil
		}})
	}
	return jobs
}
