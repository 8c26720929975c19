package analysis

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// examples privatizes each listed word `draws` times and lists the
// outputs, most frequent first (ties by word), with their counts:
// Feyisetan et al.'s Table 1 at the cell's ε. Two statistics summarise
// the lists: the share of draws returned unchanged, and the mean cosine
// of an output's vector with its input's over every draw (an unchanged
// draw scores 1) — Table 1's "the resulting words become more similar to
// the original word" as ε grows, read on the vectors the mechanism uses.
func examples(ctx context.Context, v spec.Values, env Env) (metrics.Analysis, error) {
	var a metrics.Analysis
	rows, err := rowsOf(v.Strings("list"), env)
	if err != nil {
		return a, err
	}
	m := v.Int("draws")
	counts, lookups, err := draws(ctx, env, rows, m)
	if err != nil {
		return a, err
	}
	a.Method, a.Lookups = fmt.Sprintf("sampled (%d draws per word)", m), lookups
	a.Examples = map[string][]string{}
	var unchanged int
	var cos float64
	emb := env.Space.Emb
	for i, w := range rows {
		outs := slices.Collect(maps.Keys(counts[i]))
		slices.SortFunc(outs, func(x, y int32) int {
			if c := cmp.Compare(counts[i][y], counts[i][x]); c != 0 {
				return c
			}
			return cmp.Compare(emb.Words[x], emb.Words[y])
		})
		var list []string
		for _, o := range outs {
			list = append(list, fmt.Sprintf("%s ×%d", emb.Words[o], counts[i][o]))
			cos += float64(counts[i][o]) * mech.Cosine(emb.Vector(w), emb.Vector(int(o)))
		}
		a.Examples[emb.Words[w]] = list
		a.Words = append(a.Words, emb.Words[w])
		unchanged += counts[i][int32(w)]
	}
	a.Add("unchanged %", 100*float64(unchanged)/float64(m*len(rows)))
	a.Add("cosine to input", cos/float64(m*len(rows)))
	return a, nil
}

// examplesKind registers the examples analysis (kind).
var examplesKind = kind{name: "examples", run: examples,
	plan: func(v spec.Values, env Env) (Work, error) {
		rows, err := rowsOf(v.Strings("list"), env)
		return Work{Rows: len(rows), Draws: v.Int("draws")}, err
	}}
