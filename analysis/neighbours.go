package analysis

import (
	"context"
	"fmt"
	"slices"

	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// neighbours is Feyisetan et al.'s Fig. 1: for each sampled word, the
// Euclidean distance to its k-th nearest candidate (the word itself is
// rank 0), and for each k the given percentiles over the words. Searches
// run through the mechanisms' nearest-neighbour index in batches.
func neighbours(ctx context.Context, v spec.Values, env Env) (metrics.Analysis, error) {
	var a metrics.Analysis
	emb := env.Space.Emb
	rows := neighbourRows(v, env)
	ks := v.Ints("k")
	kmax := slices.Max(ks)
	if kmax >= emb.Len() {
		return a, fmt.Errorf("k = %d needs more than %d candidates", kmax, emb.Len())
	}
	dist := make([][]float64, len(ks)) // dist[j][i]: word i's distance to its ks[j]-th neighbour
	for j := range dist {
		dist[j] = make([]float64, len(rows))
	}
	const batch = 256
	for lo := 0; lo < len(rows); lo += batch {
		if err := ctx.Err(); err != nil {
			return a, err
		}
		part := rows[lo:min(len(rows), lo+batch)]
		q := make([]float32, 0, len(part)*emb.Dim)
		for _, w := range part {
			q = append(q, emb.Vector(w)...)
		}
		_, d, err := env.Space.Index.Search(q, kmax+1)
		if err != nil {
			return a, err
		}
		for i := range part {
			for j, k := range ks {
				dist[j][lo+i] = d[i*(kmax+1)+k]
			}
		}
		a.Lookups += int64(len(part))
	}
	// Every candidate: the percentiles are the population's. A seeded
	// sample of words: each percentile carries the distribution-free 95%
	// interval of the population's quantile from the sample's order
	// statistics.
	sampled := len(rows) < emb.Len()
	for j, k := range ks {
		s := slices.Clone(dist[j])
		slices.Sort(s)
		for _, q := range v.Floats("percentiles") {
			name := fmt.Sprintf("d%d p%s", k, trimFloat(q))
			if !sampled {
				a.Add(name, percentile(s, q))
				continue
			}
			lo, hi := quantileCI(s, q/100)
			a.AddCI(name, percentile(s, q), lo, hi)
		}
	}
	a.Method = fmt.Sprintf("exact search over %d candidates for every word", emb.Len())
	if sampled {
		a.Method = fmt.Sprintf("sampled words: exact search over %d candidates for a seeded sample of %d words (95%% order-statistic intervals of the percentiles)", emb.Len(), len(rows))
	}
	return a, nil
}

// neighbourRows are the words sampled from every candidate.
func neighbourRows(v spec.Values, env Env) []int {
	pool := make([]int, env.Space.Emb.Len())
	for i := range pool {
		pool[i] = i
	}
	return sample(pool, v.Int("words"), env.Seed)
}

// neighboursKind registers the neighbours analysis (kind).
var neighboursKind = kind{name: "neighbours", run: neighbours,
	plan: func(v spec.Values, env Env) (Work, error) {
		return Work{Rows: len(neighbourRows(v, env)), Draws: 1}, nil
	}}
