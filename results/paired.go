package results

import (
	"fmt"
	"strings"

	"github.com/xp-nlp/xp/internal/near"
	"github.com/xp-nlp/xp/stats"
)

// Label names a line of the utility table as a user types it: its
// mechanism setting, mode and ε as the table's first columns print them
// ("laplace test 10", "santext p=0.3 both 3"), a stage's line by its
// stage in place of ε ("laplace both matched-privacy"), or "none" for
// the baseline.
//
// A line of a model sweep (not chosen by select) adds its point
// ("laplace test 10 hidden=64", "none hidden=64").
func Label(r Row) string {
	l := r.Setting + " " + r.Mode + " " + epsilon(r.Mode, r.Epsilon)
	switch {
	case r.Mode == "none":
		l = "none"
	case r.Stage != "":
		l = r.Setting + " " + r.Mode + " " + r.Stage
	}
	if r.Model != "" && !r.Selected {
		l += " " + r.Model
	}
	return l
}

// find is the line a label names (spaces collapsed; "baseline" is
// "none"), or an error listing the table's labels.
func find(rows []Row, label string) (Row, error) {
	want := strings.Join(strings.Fields(label), " ")
	if want == "baseline" {
		want = "none"
	}
	var labels []string
	for _, r := range rows {
		if Label(r) == want {
			return r, nil
		}
		labels = append(labels, Label(r))
	}
	return Row{}, fmt.Errorf("no line %q in the table%s (its lines: %s)", label, near.DidYouMean(want, labels), strings.Join(labels, ", "))
}

// PairedGrid tests the named lines of a utility table against each other,
// every pair of them: per pair, the seeds and examples both were scored
// on, each line's accuracy, their difference averaged over those seeds
// with its t-interval (retraining's spread), the examples on which they
// differ, the sign-flip test's two-sided p (stats.SignFlip: each example
// counted once over the seeds) and that p adjusted by Holm's method over
// the pairs asked for.
func PairedGrid(rows []Row, labels []string) (Grid, error) {
	if len(labels) < 2 {
		return Grid{}, fmt.Errorf("a comparison needs two lines or more, got %d", len(labels))
	}
	lines := make([]Row, len(labels))
	for i, l := range labels {
		r, err := find(rows, l)
		if err != nil {
			return Grid{}, err
		}
		if r.correct == nil {
			return Grid{}, fmt.Errorf("line %q: its records hold no per-example results to pair", Label(r))
		}
		lines[i] = r
	}
	type pair struct {
		a, b Row
		t    stats.Paired
	}
	var ps []pair
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			t, err := stats.SignFlip(lines[i].correct, lines[j].correct)
			if err != nil {
				return Grid{}, fmt.Errorf("%s against %s: %w", Label(lines[i]), Label(lines[j]), err)
			}
			ps = append(ps, pair{lines[i], lines[j], t})
		}
	}
	raw := make([]float64, len(ps))
	for i, p := range ps {
		raw[i] = p.t.P
	}
	holm := stats.Holm(raw)
	var g Grid
	for _, c := range []struct {
		name    string
		numeric bool
	}{{"A", false}, {"B", false}, {"seeds", true}, {"examples", true}, {"accuracy A", true}, {"accuracy B", true},
		{"Δ A − B", true}, {"discordant", true}, {"p", true}, {"p (Holm)", true}} {
		g.column(c.name, c.numeric)
	}
	for i, p := range ps {
		var d, a, b []float64 // on the seeds the test paired
		seeds, diffs := seedDiffs(p.a, p.b)
		for i, s := range seeds {
			_, inA := p.a.correct[s]
			if _, inB := p.b.correct[s]; inA && inB {
				d, a, b = append(d, diffs[i]), append(a, p.a.BySeed["accuracy"][s]), append(b, p.b.BySeed["accuracy"][s])
			}
		}
		ma, _ := stats.MeanSD(a)
		mb, _ := stats.MeanSD(b)
		md, _, ci := stats.MeanCI(d)
		exact := ""
		if !p.t.Exact {
			exact = " (normal approx.)"
		}
		g.Rows = append(g.Rows, []string{Label(p.a), Label(p.b), fmt.Sprint(p.t.Seeds), fmt.Sprint(p.t.Examples),
			fmt.Sprintf("%.4f", ma), fmt.Sprintf("%.4f", mb), diff(md, ci), fmt.Sprint(p.t.Discordant),
			fmt.Sprintf("%.2g%s", p.t.P, exact), fmt.Sprintf("%.2g", holm[i])})
	}
	g.Notes = append(g.Notes, "Paired on the seeds that scored both lines, on the same examples. Δ: A's accuracy minus B's, averaged over those seeds, with the t-interval of the seeds' differences (retraining's spread; — below 2 seeds or where every seed's Δ is the same). "+
		"p: the two-sided sign-flip test over the examples, each example counted once with its results summed over the seeds (exact; McNemar's exact test at one seed; it conditions on the trained models); discordant: the examples on which the sums differ. "+
		fmt.Sprintf("p (Holm): adjusted over the %d comparisons asked for.", len(ps)))
	return g, nil
}
