package analysis

import (
	"context"
	"math"

	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// deniability is Feyisetan et al.'s plausible deniability: for each
// sampled word w, N_w = the number of m draws of M(w) that return w and
// S_w = the number of distinct outputs among them. With the output
// distribution p known (SanText, CusText) and exact set, both are their
// expected values, m·p_w and Σ_y 1 − (1 − p_y)^m, rather than one draw of
// them. Statistics: each one's distribution over words, and the means as
// shares of m (the form of the LREC-COLING 2024 benchmark).
func deniability(ctx context.Context, v spec.Values, env Env) (metrics.Analysis, error) {
	var a metrics.Analysis
	rows, err := sampleWords(v, env)
	if err != nil {
		return a, err
	}
	m := v.Int("draws")
	ds, method, lookups, err := distributions(ctx, env, rows, m, v.Bool("exact"))
	if err != nil {
		return a, err
	}
	a.Method, a.Lookups = method, lookups
	nw, sw := plausible(rows, ds, m, method == "exact")
	for _, w := range rows {
		a.Words = append(a.Words, env.Space.Emb.Words[w])
	}
	summarize(&a, "N_w", nw)
	summarize(&a, "S_w", sw)
	a.Add("N_w %", 100*mean(nw)/float64(m))
	a.Add("S_w %", 100*mean(sw)/float64(m))
	a.Series = map[string][]metrics.Num{"N_w": nums(nw), "S_w": nums(sw)}
	return a, nil
}

// plausible is N_w and S_w of each row from its output distribution: the
// counts of m draws, or their expected values when exact.
func plausible(rows []int, ds []distribution, m int, exact bool) (nw, sw []float64) {
	nw, sw = make([]float64, len(rows)), make([]float64, len(rows))
	for i, w := range rows {
		d := ds[i]
		for j, o := range d.outs {
			if int(o) == w {
				nw[i] = d.p[j] * float64(m)
			}
			if exact {
				sw[i] += 1 - math.Pow(1-d.p[j], float64(m))
			} else {
				sw[i]++
			}
		}
		if !exact {
			nw[i] = math.Round(nw[i]) // counts: p was count/m
		}
	}
	return nw, sw
}

// deniabilityKind registers the plausible-deniability analysis (kind).
var deniabilityKind = kind{name: "plausible-deniability", run: deniability,
	plan: func(v spec.Values, env Env) (Work, error) {
		rows, err := sampleWords(v, env)
		return Work{Rows: len(rows), Draws: v.Int("draws")}, err
	}}
