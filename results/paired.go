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
	l := r.Setting + " " + r.Mode + " " + Epsilon(r.Mode, r.Epsilon)
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

// Pairing is the test of two lines of a utility table against each
// other (see Pairs).
type Pairing struct {
	A, B Row
	// Test is the sign-flip test of their per-example results on the
	// seeds and examples both were scored on (stats.SignFlip); Holm its p
	// adjusted over the pairs asked for.
	Test stats.Paired
	Holm float64
	// AccA and AccB are the lines' mean accuracies over the seeds the
	// test paired; Diff their difference averaged over those seeds with
	// its t half-width DiffCI (NaN below 2 seeds).
	AccA, AccB, Diff, DiffCI float64
}

// Pairs tests the named lines of a utility table against each other,
// every pair of them in the order named: per pair, the sign-flip test's
// two-sided p (stats.SignFlip: each example counted once over the seeds)
// and that p adjusted by Holm's method over the pairs asked for, with the
// lines' accuracies and their difference on the seeds the test paired.
func Pairs(rows []Row, labels []string) ([]Pairing, error) {
	if len(labels) < 2 {
		return nil, fmt.Errorf("a comparison needs two lines or more, got %d", len(labels))
	}
	lines := make([]Row, len(labels))
	for i, l := range labels {
		r, err := find(rows, l)
		if err != nil {
			return nil, err
		}
		if r.correct == nil {
			return nil, fmt.Errorf("line %q: its records hold no per-example results to pair", Label(r))
		}
		lines[i] = r
	}
	var ps []Pairing
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			t, err := stats.SignFlip(lines[i].correct, lines[j].correct)
			if err != nil {
				return nil, fmt.Errorf("%s against %s: %w", Label(lines[i]), Label(lines[j]), err)
			}
			ps = append(ps, Pairing{A: lines[i], B: lines[j], Test: t})
		}
	}
	raw := make([]float64, len(ps))
	for i, p := range ps {
		raw[i] = p.Test.P
	}
	for i, h := range stats.Holm(raw) {
		p := &ps[i]
		p.Holm = h
		var d, a, b []float64 // on the seeds the test paired
		seeds, diffs := SeedDiffs(p.A, p.B)
		for k, s := range seeds {
			_, inA := p.A.correct[s]
			if _, inB := p.B.correct[s]; inA && inB {
				d, a, b = append(d, diffs[k]), append(a, p.A.BySeed["accuracy"][s]), append(b, p.B.BySeed["accuracy"][s])
			}
		}
		p.AccA, _ = stats.MeanSD(a)
		p.AccB, _ = stats.MeanSD(b)
		p.Diff, _, p.DiffCI = stats.MeanCI(d)
	}
	return ps, nil
}
