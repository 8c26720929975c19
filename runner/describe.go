package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/table"
)

// Describe loads the inputs a config names, as a run would (its dataset,
// limits, carved splits and tokenizer; its vectors, from the cache where
// they are), writing nothing, and tells what a model will see: for each
// split, its examples, tokens, the share of tokens without a vector, and
// each label's count. xp data show CONFIG prints it.
func Describe(ctx context.Context, c *experiments.Config) (table.Grid, error) {
	s, err := Open(ctx, c, SessionOptions{ReadOnly: true})
	if err != nil {
		return table.Grid{}, err
	}
	defer s.Close()
	in := s.in
	var labels []string
	if in.dataset != nil {
		labels = in.dataset.Labels
	}
	g := table.Grid{Header: []string{"split", "examples", "tokens", "without a vector", "labels"}, Numeric: []bool{false, true, true, true, false}}
	names := slices.Sorted(maps.Keys(in.splits))
	slices.SortStableFunc(names, func(a, b string) int { return slices.Index(Splits, a) - slices.Index(Splits, b) })
	for _, name := range names {
		sp := in.splits[name]
		var tokens, oov int
		for i, doc := range sp.Docs {
			texts := [][]string{doc}
			if sp.Docs2 != nil {
				texts = append(texts, sp.Docs2[i])
			}
			for _, t := range texts {
				for _, w := range t {
					tokens++
					if _, ok := in.emb.Index(w); !ok {
						oov++
					}
				}
			}
		}
		counts := map[int64]int{}
		for _, l := range sp.Labels {
			counts[l]++
		}
		var ls []string
		for l, n := range counts {
			name := fmt.Sprint(l)
			if int(l) < len(labels) {
				name = labels[l]
			}
			ls = append(ls, fmt.Sprintf("%s %d (%.1f%%)", name, n, 100*float64(n)/float64(max(1, len(sp.Labels)))))
		}
		slices.Sort(ls)
		share := "—"
		if tokens > 0 {
			share = fmt.Sprintf("%.1f%%", 100*float64(oov)/float64(tokens))
		}
		g.Rows = append(g.Rows, []string{name, fmt.Sprint(len(sp.Docs)), fmt.Sprint(tokens), share, strings.Join(ls, ", ")})
	}
	g.Notes = []string{fmt.Sprintf("%d labels: %s. Vectors: %s (%d words). valid is carved from train (dataset.valid_fraction); the test split is what cells are scored on.",
		len(labels), strings.Join(labels, ", "), c.Embedding.Path, in.emb.Len())}
	if len(labels) > 2 {
		g.Notes = append(g.Notes, "More than two labels: accuracy is multi-class (chance is the largest class's share).")
	}
	return g, nil
}
