package table

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/stats"
)

// runDiff is line b's accuracy minus a's: averaged over the seeds both
// have, with their count where it is not every seed of both; the means'
// difference, marked unpaired, where they share none.
func runDiff(a, b results.Row) string {
	_, d := results.SeedDiffs(b, a)
	switch {
	case len(d) == 0:
		return fmt.Sprintf("%+.4f (unpaired)", b.Accuracy-a.Accuracy)
	case len(d) < max(a.Seeds, b.Seeds):
		m, _ := stats.MeanSD(d)
		if len(d) == 1 {
			return fmt.Sprintf("%+.4f (1 seed paired)", m)
		}
		return fmt.Sprintf("%+.4f (%d seeds paired)", m, len(d))
	}
	m, _ := stats.MeanSD(d)
	return fmt.Sprintf("%+.4f", m)
}

// CompareGrid renders the utility tables of several runs side by side, one
// line per setting, mode and ε present in any (in the first run's order,
// then the others'): each run's accuracy as mean [95% CI] with its seed
// count, and each later run's difference to the first — over the seeds
// both have where they share any (a seed in one run only would pass for
// a difference: two copies of one baseline cell, one with a seed more,
// read −0.047), marked unpaired where they share none.
func CompareGrid(names []string, tables [][]results.Row) Grid {
	type key struct {
		setting, mode string
		eps           float64
		stage, model  string
	}
	var keys []key
	at := make([]map[key]results.Row, len(tables))
	for i, rows := range tables {
		at[i] = map[key]results.Row{}
		for _, r := range rows {
			k := key{r.Setting, r.Mode, r.Epsilon, r.Stage, r.Model}
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			at[i][k] = r
		}
	}
	var g Grid
	g.column("mechanism", false)
	g.column("mode", false)
	g.column("ε", true)
	for i, n := range names {
		g.column(n+": accuracy (seeds)", true)
		if i > 0 {
			g.column(n+" − "+names[0], true)
		}
	}
	for _, k := range keys {
		row := []string{strings.TrimSpace(k.setting + " " + k.model), k.mode, cmp.Or(results.Row{Mode: k.mode, Epsilon: k.eps, Stage: k.stage, EpsCI: math.NaN()}.EpsilonText(), "—")}
		first, inFirst := at[0][k]
		for i := range names {
			r, ok := at[i][k]
			switch {
			case !ok || r.Seeds == 0:
				row = append(row, "—")
			case math.IsNaN(r.AccCI) || r.AccCI == 0:
				row = append(row, fmt.Sprintf("%.4f (%d)", r.Accuracy, r.Seeds))
			default:
				row = append(row, fmt.Sprintf("%.4f %s (%d)", r.Accuracy, interval(r.Accuracy, r.AccCI), r.Seeds))
			}
			if i == 0 {
				continue
			}
			if ok && inFirst && r.Seeds > 0 && first.Seeds > 0 {
				row = append(row, runDiff(first, r))
			} else {
				row = append(row, "—")
			}
		}
		g.Rows = append(g.Rows, row)
	}
	return g
}

// PairedGrid tests the named lines of a utility table against each other,
// every pair of them (results.Pairs): per pair, the seeds and examples
// both were scored on, each line's accuracy, their difference averaged
// over those seeds with its t-interval (retraining's spread), the
// examples on which they differ, the sign-flip test's two-sided p
// (stats.SignFlip: each example counted once over the seeds) and that p
// adjusted by Holm's method over the pairs asked for.
func PairedGrid(rows []results.Row, labels []string) (Grid, error) {
	ps, err := results.Pairs(rows, labels)
	if err != nil {
		return Grid{}, err
	}
	var g Grid
	for _, c := range []struct {
		name    string
		numeric bool
	}{{"A", false}, {"B", false}, {"seeds", true}, {"examples", true}, {"accuracy A", true}, {"accuracy B", true},
		{"Δ A − B", true}, {"discordant", true}, {"p", true}, {"p (Holm)", true}} {
		g.column(c.name, c.numeric)
	}
	for _, p := range ps {
		exact := ""
		if !p.Test.Exact {
			exact = " (normal approx.)"
		}
		g.Rows = append(g.Rows, []string{results.Label(p.A), results.Label(p.B), fmt.Sprint(p.Test.Seeds), fmt.Sprint(p.Test.Examples),
			fmt.Sprintf("%.4f", p.AccA), fmt.Sprintf("%.4f", p.AccB), diff(p.Diff, p.DiffCI), fmt.Sprint(p.Test.Discordant),
			fmt.Sprintf("%.2g%s", p.Test.P, exact), fmt.Sprintf("%.2g", p.Holm)})
	}
	g.Notes = append(g.Notes, "Paired on the seeds that scored both lines, on the same examples. Δ: A's accuracy minus B's, averaged over those seeds, with the t-interval of the seeds' differences (retraining's spread; — below 2 seeds or where every seed's Δ is the same). "+
		"p: the two-sided sign-flip test over the examples, each example counted once with its results summed over the seeds (exact; McNemar's exact test at one seed; it conditions on the trained models); discordant: the examples on which the sums differ. "+
		fmt.Sprintf("p (Holm): adjusted over the %d comparisons asked for.", len(ps)))
	return g, nil
}
