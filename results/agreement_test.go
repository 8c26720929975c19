package results

import (
	"math"
	"strings"
	"testing"
)

// TestAgree: each rule's verdict follows from the rows' means and
// intervals: on the claimed side holds, on the other fails, overlapping
// or resting on one sampled seed is unsettled, a missing row is not run.
func TestAgree(t *testing.T) {
	rows := []Row{
		{Setting: "none", Mode: "none", Seeds: 3, Accuracy: 0.80, AccCI: 0.01},
		{Setting: "m k=5", Mode: "both", Epsilon: 1, Seeds: 3, Accuracy: 0.75, AccCI: 0.01},
		{Setting: "m k=50", Mode: "both", Epsilon: 1, Seeds: 3, Accuracy: 0.60, AccCI: 0.02},
		{Setting: "m k=500", Mode: "both", Epsilon: 1, Seeds: 3, Accuracy: 0.61, AccCI: 0.03},
		{Setting: "one", Mode: "both", Epsilon: 1, Seeds: 1, Accuracy: 0.2, AccCI: math.NaN()},
	}
	stats := []StatRow{
		{Analysis: "query-attack", Setting: "a", Epsilon: 1, Seeds: 1, Names: []string{"N w"}, Mean: []float64{90}, CI: []float64{math.NaN()}, Method: "exact"},
		{Analysis: "query-attack", Setting: "b", Epsilon: 1, Seeds: 1, Names: []string{"N w"}, Mean: []float64{12}, CI: []float64{math.NaN()}, Method: "exact"},
		{Analysis: "plausible-deniability", Setting: "a", Epsilon: 5, Seeds: 1, Names: []string{"S_w min"}, Mean: []float64{453}, CI: []float64{math.NaN()}, Method: "sampled (1000 draws per word)"},
		// N from simulated votes within an exact analysis: its interval
		{Analysis: "query-attack", Setting: "sim", Epsilon: 1, Seeds: 1, Names: []string{"N w"}, Mean: []float64{977}, CI: []float64{math.NaN()}, Method: "exact", Interval: map[string][2]float64{"N w": {960, 990}}},
	}
	u := func(setting string) ClaimPoint { return ClaimPoint{Setting: setting, Mode: "both", Epsilon: 1} }
	q := func(setting string) ClaimPoint {
		return ClaimPoint{Setting: setting, Analysis: "query-attack", Epsilon: 1}
	}
	for _, c := range []struct {
		name  string
		claim Claim
		want  string
	}{
		{"greater holds", Claim{Rule: "greater", Stat: "accuracy", Points: []ClaimPoint{u("m k=5"), u("m k=50")}}, Holds},
		{"greater fails", Claim{Rule: "greater", Stat: "accuracy", Points: []ClaimPoint{u("m k=50"), u("m k=5")}}, Fails},
		{"overlap unsettled", Claim{Rule: "greater", Stat: "accuracy", Points: []ClaimPoint{u("m k=50"), u("m k=500")}}, Unsettled},
		{"decreasing: one step overlaps", Claim{Rule: "decreasing", Stat: "accuracy", Points: []ClaimPoint{u("m k=5"), u("m k=50"), u("m k=500")}}, Unsettled},
		{"increasing fails on the first step", Claim{Rule: "increasing", Stat: "accuracy", Points: []ClaimPoint{u("m k=5"), u("m k=50"), u("m k=500")}}, Fails},
		{"one seed of a sampled value", Claim{Rule: "greater", Stat: "accuracy", Points: []ClaimPoint{u("m k=5"), u("one")}}, Unsettled},
		{"exact values decide on one seed", Claim{Rule: "greater", Stat: "N w", Points: []ClaimPoint{q("a"), q("b")}}, Holds},
		{"at-least on a sampled seed", Claim{Rule: "at-least", Bar: 300, Stat: "S_w min", Points: []ClaimPoint{{Setting: "a", Analysis: "plausible-deniability", Epsilon: 5}}}, Unsettled},
		{"at-most exact fails", Claim{Rule: "at-most", Bar: 50, Stat: "N w", Points: []ClaimPoint{q("a"), q("b")}}, Fails},
		{"at-most its own value holds", Claim{Rule: "at-most", Bar: 12, Stat: "N w", Points: []ClaimPoint{q("b")}}, Holds},
		{"at-least its own value holds", Claim{Rule: "at-least", Bar: 90, Stat: "N w", Points: []ClaimPoint{q("a")}}, Holds},
		{"at-least above it fails", Claim{Rule: "at-least", Bar: 91, Stat: "N w", Points: []ClaimPoint{q("a")}}, Fails},
		{"at-most straddled", Claim{Rule: "at-most", Bar: 0.61, Stat: "accuracy", Points: []ClaimPoint{u("m k=500")}}, Unsettled},
		{"simulated N inside its interval", Claim{Rule: "at-least", Bar: 970, Stat: "N w", Points: []ClaimPoint{q("sim")}}, Unsettled},
		{"simulated N: bar below the interval", Claim{Rule: "at-least", Bar: 940, Stat: "N w", Points: []ClaimPoint{q("sim")}}, Holds},
		{"simulated N: bar above the interval", Claim{Rule: "at-least", Bar: 1000, Stat: "N w", Points: []ClaimPoint{q("sim")}}, Fails},
		{"baseline's difference", Claim{Rule: "greater", Stat: "accuracy", Points: []ClaimPoint{{Setting: "none", Mode: "none"}, u("m k=5")}}, Holds},
		{"missing row", Claim{Rule: "greater", Stat: "accuracy", Points: []ClaimPoint{u("m k=5"), u("m k=9")}}, NotRun},
		{"unknown statistic", Claim{Rule: "greater", Stat: "N w", Points: []ClaimPoint{q("a"), q("zzz")}}, NotRun},
	} {
		a := Agree(c.claim, rows, stats)
		if a.Verdict != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, a.Verdict, a.Reason, c.want)
		}
		if (a.Verdict == Holds) != (a.Reason == "") {
			t.Errorf("%s: verdict %s with reason %q", c.name, a.Verdict, a.Reason)
		}
	}
	// Paired: two sampled rows on the same three seeds whose intervals
	// overlap, but whose per-seed differences all favour the first.
	seeds := func(v ...float64) map[string]map[uint64]float64 {
		m := map[uint64]float64{}
		for i, x := range v {
			m[uint64(i+1)] = x
		}
		return map[string]map[uint64]float64{"N_w %": m}
	}
	pd := []StatRow{
		{Analysis: "pd", Setting: "hi", Epsilon: 10, Seeds: 3, Names: []string{"N_w %"}, Mean: []float64{4}, CI: []float64{2}, BySeed: seeds(2, 4, 6)},
		{Analysis: "pd", Setting: "lo", Epsilon: 10, Seeds: 3, Names: []string{"N_w %"}, Mean: []float64{3}, CI: []float64{2}, BySeed: seeds(1.1, 2.9, 5)},
		{Analysis: "pd", Setting: "mixed", Epsilon: 10, Seeds: 3, Names: []string{"N_w %"}, Mean: []float64{4}, CI: []float64{2}, BySeed: seeds(1, 5, 6)},
		{Analysis: "pd", Setting: "other seeds", Epsilon: 10, Seeds: 2, Names: []string{"N_w %"}, Mean: []float64{3}, CI: []float64{2}, BySeed: map[string]map[uint64]float64{"N_w %": {7: 2, 8: 4}}},
	}
	pt := func(s string) ClaimPoint { return ClaimPoint{Setting: s, Analysis: "pd", Epsilon: 10} }
	for _, c := range []struct {
		name string
		a, b string
		want string
	}{
		{"paired differences decide", "hi", "lo", Holds},
		{"paired, the other way", "lo", "hi", Fails},
		{"paired differences of both signs", "mixed", "lo", Unsettled},
		{"no common seeds: the intervals", "hi", "other seeds", Unsettled},
	} {
		a := Agree(Claim{Rule: "greater", Stat: "N_w %", Points: []ClaimPoint{pt(c.a), pt(c.b)}}, nil, pd)
		if a.Verdict != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, a.Verdict, a.Reason, c.want)
		}
	}
	// Utility lines pair by seed too.
	acc := func(v ...float64) map[string]map[uint64]float64 {
		m := seeds(v...)["N_w %"]
		return map[string]map[uint64]float64{"accuracy": m}
	}
	urows := []Row{
		{Setting: "a", Mode: "both", Epsilon: 1, Seeds: 3, Accuracy: 0.70, AccCI: 0.05, BySeed: acc(0.66, 0.70, 0.74)},
		{Setting: "b", Mode: "both", Epsilon: 1, Seeds: 3, Accuracy: 0.68, AccCI: 0.05, BySeed: acc(0.64, 0.68, 0.72)},
	}
	if a := Agree(Claim{Rule: "greater", Stat: "accuracy", Points: []ClaimPoint{u("a"), u("b")}}, urows, nil); a.Verdict != Holds {
		t.Errorf("paired utility lines: %s (%s), want %s", a.Verdict, a.Reason, Holds)
	}
	for _, c := range []struct{ m, lo, hi, want float64 }{
		{977, 960, 990, 17}, {50, 50, 50, 0}, {math.Inf(1), math.Inf(1), math.Inf(1), 0},
		{math.Inf(1), 4000, math.Inf(1), math.Inf(1)}, {900, 850, math.Inf(1), math.Inf(1)},
		{900, 905, 930, 30}, {900, 880, 890, 20}, // searches that do not bracket N
	} {
		if got := halfWidth(c.m, c.lo, c.hi); got != c.want {
			t.Errorf("halfWidth(%v, %v, %v) = %v, want %v", c.m, c.lo, c.hi, got, c.want)
		}
	}
	// A simulated N is not called exact: its interval's larger side.
	if got := estimateText(lookup(q("sim"), "N w", nil, stats)); got != "977 ± 17 (simulated votes, 1 seed)" {
		t.Errorf("simulated N shown as %q", got)
	}
	// A sampled value whose seeds agree is not called exact.
	same := StatRow{Analysis: "epsilon-search", Setting: "laplace", Seeds: 3, Names: []string{"ε"}, Mean: []float64{12}, CI: []float64{0}, Method: "bisection"}
	if got := estimateText(lookup(ClaimPoint{Analysis: "epsilon-search", Setting: "laplace"}, "ε", nil, []StatRow{same})); got != "12 (all 3 seeds equal)" {
		t.Errorf("agreeing seeds shown as %q", got)
	}
	// The table shows published beside xp and counts verdicts.
	one := 0.9
	md := AgreementMarkdown([]Agreement{Agree(Claim{Item: "T1", Says: "falls", Rule: "greater", Stat: "accuracy", Points: []ClaimPoint{u("m k=5"), u("m k=50")}, Published: []*float64{&one, nil}}, rows, stats)})
	for _, want := range []string{"| T1 | falls |", "0.9 / —", "0.75 ± 0.01 (3 seeds) / 0.6 ± 0.02 (3 seeds)", "**holds**", "1 claims: 1 hold"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}

func TestParseClaims(t *testing.T) {
	good := "- config: a.yaml\n  item: T\n  says: s\n  rule: greater\n  stat: accuracy\n  points:\n    - {setting: none, mode: none}\n    - {setting: x, mode: both, epsilon: 1}\n"
	if cs, err := ParseClaims("p.yaml", []byte(good)); err != nil || len(cs) != 1 || cs[0].Line() != 1 {
		t.Fatalf("good file: %v %v", cs, err)
	}
	for _, c := range []struct{ name, text, want string }{
		{"unknown key", good + "  colour: red\n", "p.yaml: line 9: field colour not found"},
		{"unknown rule", strings.Replace(good, "greater", "bigger", 1), `p.yaml:1: rule "bigger", want one of at-least, at-most, decreasing, greater, increasing`},
		{"greater of three", good + "    - {setting: y, mode: both, epsilon: 1}\n", "p.yaml:1: rule greater compares 2 points, not 3"},
		{"published count", good + "  published: [1]\n", "p.yaml:1: 1 published values for 2 points"},
		{"mode or analysis", strings.Replace(good, "{setting: none, mode: none}", "{setting: none}", 1), "p.yaml:1: point 1: give mode"},
		{"second claim's line", good + strings.Replace(good, "says: s", "says: \"\"", 1), "p.yaml:9: a claim needs config, item and says"},
	} {
		_, err := ParseClaims("p.yaml", []byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}
