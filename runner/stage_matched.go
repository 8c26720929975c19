package runner

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/xp-nlp/xp/analysis"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/metrics"
)

// matchedStage: the mechanisms compared at matched privacy (stageKind).
// A result's rate is per result (its attack and utility cell dominate);
// unmeasured, its probes privatize the attack's texts, then the attack
// and the utility cell at the ε found are priced as cells.
var matchedStage = stageKind{name: "matched-privacy", baseline: true,
	jobs:  func(s *Session, in stageInputs) []stageJob { return s.matchedJobs(in) },
	work:  func(*Session, int, experiments.Cell) int64 { return 1 },
	price: priceMatched}

// priceMatched prices one matched-privacy result no earlier one measured.
func priceMatched(x *estimator, g stageGroup) {
	s, e := x.s, x.e
	v := s.c.StageParams(g.i)
	probes := int64(searchProbes(v.Float("lo"), v.Float("hi"), v.Int("probes")))
	ap := s.c.AnalysisParams()
	priv, train := s.rates.keys(g.cell, x.threads)
	at := g.cell
	at.Epsilon = g.cells[len(g.cells)-1].Cell.Epsilon
	if v.String("match_on") == "strongest" { // the whole attack at every probe
		for range probes {
			x.analysis(at)
		}
	} else {
		n := probes * s.an.attackTokens(g.cell, ap.Int("sentences")+ap.Int("test"), ap.Int("max_len"))
		e.StageLookups += n
		x.price(priv, n, s.rates.sameSearch(g.cell, false)...)
	}
	x.analysis(at)
	u := experiments.Cell{Mechanism: g.cell.Mechanism, Params: g.cell.Params, Epsilon: math.Pi, Mode: v.String("apply"), Seed: g.cell.Seed} // an ε no cell has: nothing cached
	for _, split := range Splits {
		if u.Privatizes(role(split)) {
			x.privatization(priv, g.cell, s.in.splits[split].tokens())
		}
	}
	if u.Privatizes("train") {
		x.training(u, train)
	}
}

// matchedJobs compare the mechanisms at matched privacy: per mechanism
// setting and seed of the reconstruction cells, the ε at which the
// stronger of the attackers that need no training — copying the observed
// word, and the context-free attacker — recovers the target share of
// tokens, and at that ε the whole attack (its tagger too) and the utility
// cell of the stage's apply mode, beside the seed's baseline. A match no
// attacker beats copying at, and one the tagger beats, are flagged: the
// first matches unchanged shares, not an attacker's success; the second
// matched a weaker attacker than the run has. The utility cell at the ε
// found is run and recorded like any cell (under its own key, so a killed
// stage keeps it and a rerun reuses it); it is not one of the run's
// planned cells, and the tables list it as the stage's.
func (s *Session) matchedJobs(in stageInputs) []stageJob {
	c := in.c
	v := c.StageParams(in.i)
	target, mode := v.Float("target"), v.String("apply")
	strongest := v.String("match_on") == "strongest"
	byGroup := in.groups("reconstruction")
	var jobs []stageJob
	for _, group := range byGroup.groups {
		cell := group[0].Cell
		b, ok := byGroup.baseline[cell.Seed]
		if !ok {
			continue
		}
		inputs := append(slices.Clone(group), b)
		cell.Analysis, cell.Epsilon = "matched-privacy", 0
		jobs = append(jobs, stageJob{cell: cell, inputs: inputs, compute: func(ctx context.Context) (metrics.Analysis, error) {
			var a metrics.Analysis
			at := func(eps float64) experiments.Cell {
				x := cell
				x.Analysis, x.Epsilon = "reconstruction", eps
				return x
			}
			recovery := func(eps float64) (float64, error) {
				env, _, err := s.an.analysisEnv(at(eps))
				if err != nil {
					return 0, err
				}
				if strongest {
					attack, err := analysis.Run(ctx, "reconstruction", c.Analysis.Params, env)
					if err != nil {
						return 0, err
					}
					a.Lookups += attack.Lookups
					pct, who := strongestRecovery(attack)
					s.logf("%s: ε %.4g: %s recovers %.2f%% (target %g%%)", cell, eps, who, pct, target)
					return pct, nil
				}
				r, n, err := analysis.ContextFreeRecovery(ctx, c.Analysis.Params, env)
				a.Lookups += n
				pct, who := r.Best()
				s.logf("%s: ε %.4g: %s recovers %.2f%% (context-free %.2f%%, copying %.2f%%; target %g%%)", cell, eps, who, pct, r.ContextFree, r.Copy, target)
				return pct, err
			}
			eps, got, trace, found, err := analysis.SearchEpsilon(ctx, target, v.Float("lo"), v.Float("hi"), v.Float("tolerance"), v.Int("probes"), recovery)
			if err != nil {
				return a, err
			}
			on := "the stronger of copying and the context-free attacker"
			if strongest {
				on = "the strongest of copying, the context-free attacker and the tagger (the whole attack at every probe)"
			}
			a.Method = fmt.Sprintf("search on log ε over [%g, %g] (bracketed from the middle by decades, then bisected) for the recovery %g%% by %s (%d probes), then the attack and a utility cell (apply %s) at the ε found", v.Float("lo"), v.Float("hi"), target, on, len(trace), mode)
			if !found {
				a.Notes = append(a.Notes, fmt.Sprintf("target recovery %g%% not reached within tolerance in [%g, %g] after %d probes: closest %.4g%% at ε %.4g (the results below are at that ε)", target, v.Float("lo"), v.Float("hi"), len(trace), got, eps))
				a.Flag(fmt.Sprintf("target not reached (%.3g%% at ε %.4g)", got, eps))
			}
			if eps == v.Float("lo") || eps == v.Float("hi") {
				a.Flag(fmt.Sprintf("stopped at the range's end (ε %g)", eps))
			}
			env, _, err := s.an.analysisEnv(at(eps))
			if err != nil {
				return a, err
			}
			attack, err := analysis.Run(ctx, "reconstruction", c.Analysis.Params, env)
			if err != nil {
				return a, err
			}
			a.Lookups += attack.Lookups
			a.Add("ε", eps)
			a.Add("probes", float64(len(trace)))
			cheap := analysis.CheapRecovery{Copy: attack.Stat("unchanged %"), ContextFree: attack.Stat("context-free recovery %")}
			matched, who := cheap.Best()
			if strongest {
				matched, who = strongestRecovery(attack)
			}
			a.Add("matched recovery %", matched)
			for _, st := range []string{"context-free recovery %", "recovery %", "context-free recovery % rare", "recovery % rare", "unchanged %", "tokens"} {
				a.Add(st, attack.Stat(st))
			}
			for _, f := range attack.Flags {
				a.Flag(f)
			}
			if f := matchFlag(cheap, attack.Stat("recovery %"), strongest); f != "" {
				a.Flag(f)
			}
			u := experiments.Cell{Mechanism: cell.Mechanism, Params: cell.Params, Epsilon: eps, Mode: mode, Seed: cell.Seed}
			rec, err := s.runRecorded(ctx, in, u)
			if err != nil {
				return a, err
			}
			base := inputs[len(inputs)-1].Test.Accuracy
			a.Add("accuracy", rec.Test.Accuracy)
			a.Add("baseline accuracy", base)
			a.Add("Δ accuracy", rec.Test.Accuracy-base)
			a.Notes = append(a.Notes, fmt.Sprintf("seed %d: ε %.4g, matched on %s; utility cell %s (key %.12s)", cell.Seed, eps, who, u, rec.Key))
			return a, nil
		}})
	}
	return jobs
}

// strongestRecovery is the strongest of the reconstruction attack's
// attackers — copying the observed word, the context-free attacker, the
// tagger — and its name.
func strongestRecovery(attack metrics.Analysis) (pct float64, attacker string) {
	pct, attacker = analysis.CheapRecovery{Copy: attack.Stat("unchanged %"), ContextFree: attack.Stat("context-free recovery %")}.Best()
	if t := attack.Stat("recovery %"); t > pct {
		return t, "the tagger"
	}
	return pct, attacker
}

// matchFlag is the flag of a match at which the attackers that need no
// training recover cheap and the tagger tagger (percent): a match no
// attacker beats copying at compares unchanged shares, not attacks; one
// the tagger beats matched a weaker attacker than the run has (not
// where the search matched on the strongest, the tagger included); ""
// for a match on the strongest attacker.
func matchFlag(cheap analysis.CheapRecovery, tagger float64, strongest bool) string {
	matched, _ := cheap.Best()
	switch {
	case max(cheap.ContextFree, tagger) <= cheap.Copy+analysis.CopyMargin:
		return fmt.Sprintf("matched on copying alone: no attacker beats the unchanged share %.3g%% here (context-free %.3g%%, tagger %.3g%%): equal unchanged shares, not equal attacks", cheap.Copy, cheap.ContextFree, tagger)
	case !strongest && tagger > matched+analysis.CopyMargin:
		return fmt.Sprintf("the tagger recovers %.3g%% here, above the %.3g%% matched: matched on a weaker attacker than the run has", tagger, matched)
	}
	return ""
}
