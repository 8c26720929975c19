package analysis

import (
	"context"
	"fmt"
	"slices"

	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// Split computes the opt-in privacy measures of one privatized split
// (config key privacy, spec's measure descriptor "privacy"). env.Counts
// are the split's original word counts. Over the split's word types that
// have a candidate vector — its top most frequent when top > 0 — each
// type's output distribution under the cell's mechanism is taken, exact
// where the mechanism knows it (and exact is set), otherwise from draws
// per type, and gives
//
//   - deniability: the mean over the types of N_w and S_w, as shares of
//     the draws (as plausible-deniability reports them);
//   - recovery: the Bayesian adversary's 1 − E_M with the split's word
//     frequencies (over those types) as its prior — the chance that it
//     names the original word of a token of the split (as bayes-adversary
//     reports it, with its interval when sampled).
//
// Both read the same distributions, so asking for both costs no more
// than one. "token share" is the share of the split's tokens with a
// vector that the types cover; Lookups is the draws made (the cost).
func Split(ctx context.Context, raw map[string]any, env Env) (metrics.Analysis, error) {
	var a metrics.Analysis
	_, v, err := spec.Resolve(spec.Measure, "privacy", 1, raw)
	if err != nil {
		return a, err
	}
	if env.Mech == nil || env.Counts == nil {
		return a, fmt.Errorf("privacy measures need the cell's mechanism and the split's word counts")
	}
	rows := datasetRows(env)
	var all float64
	for _, w := range rows {
		all += float64(env.Counts[env.Space.Emb.Words[w]])
	}
	if top := v.Int("top"); top > 0 && top < len(rows) {
		rows = rows[:top]
	}
	if len(rows) == 0 {
		return a, fmt.Errorf("no word of the split has a vector")
	}
	var covered float64
	for _, w := range rows {
		covered += float64(env.Counts[env.Space.Emb.Words[w]])
	}
	m := v.Int("draws")
	ds, method, lookups, err := distributions(ctx, env, rows, m, v.Bool("exact"))
	if err != nil {
		return a, err
	}
	a.Method, a.Lookups = method, lookups
	exact := method == "exact"
	a.Add("word types", float64(len(rows)))
	a.Add("token share", covered/all)
	measures := v.Strings("measures")
	if slices.Contains(measures, "deniability") {
		nw, sw := plausible(rows, ds, m, exact)
		a.Add("N_w %", 100*mean(nw)/float64(m))
		a.Add("S_w %", 100*mean(sw)/float64(m))
	}
	if slices.Contains(measures, "recovery") {
		env.Labels = nil // a split's loss is the cell's accuracy, not a lexicon's
		adv := adversary(env, rows, priorOf(env, rows), ds, m, exact)
		if exact {
			a.Add("recovery", adv.recovery)
		} else {
			a.AddCI("recovery", adv.recovery, adv.recovery-adv.ci, adv.recovery+adv.ci)
			a.Add("recovery held-out", 1-adv.heldOut)
			a.Add("single-draw recovery", adv.seenOnce)
			a.Notes = append(a.Notes, biasNote(adv.seenOnce))
		}
	}
	return a, nil
}
