package claims

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/stats"
)

// seeds makes per-seed values of one statistic (seeds 1, 2, …).
func seeds(stat string, v ...float64) results.BySeed {
	m := map[uint64]float64{}
	for i, x := range v {
		m[uint64(i+1)] = x
	}
	return results.BySeed{stat: m}
}

// row is an analysis row of one statistic over the given seeds' values
// (its mean and t half-width as results.AnalysisTable computes them).
func row(setting string, eps float64, stat string, v ...float64) results.StatRow {
	m, sd, ci := stats.MeanCI(v)
	return results.StatRow{Analysis: "a", Setting: setting, Epsilon: eps, Seeds: len(v), Names: []string{stat},
		Mean: []float64{m}, SD: []float64{sd}, CI: []float64{ci}, BySeed: seeds(stat, v...), Method: "sampled"}
}

func pt(setting string, eps float64) Point {
	return Point{Analysis: "a", Setting: setting, Epsilon: eps}
}

// decideOn decides a claim on one run's tables.
func decideOn(t *testing.T, c Claim, tb tables) Agreement {
	t.Helper()
	c.Run, c.Paper, c.Item, c.Cites, c.Says = "r", "p", "i", "c", "s"
	if c.Kind == "" {
		c.Kind = Conclusion
	}
	f := &File{Path: "claims.yaml", Records: ".", Papers: []Paper{{ID: "p", Cite: "P"}}, Runs: []Run{{Name: "r", Config: "r.yaml"}}}
	if err := c.check(map[string]bool{"p": true}, map[string]bool{"r": true}); err != nil {
		t.Fatalf("%s: %v", c.Rule, err)
	}
	a, err := f.decide(&c, func(string) (tables, string, error) { return tb, "dir", nil })
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRules: each rule holds on values on its side, does not hold on the
// other side, and is unsettled on overlapping intervals or a sampled
// value of one seed; paired seeds decide where the intervals overlap.
func TestRules(t *testing.T) {
	tb := tables{stats: []results.StatRow{
		row("hi", 1, "x", 10, 11, 12),
		row("mid", 1, "x", 5, 6, 7),
		row("lo", 1, "x", 1, 2, 3),
		row("near-mid", 1, "x", 5.5, 6.5, 6),
		row("one", 1, "x", 4),
		row("tiny", 1, "x", 0.9, 1, 1.1),
		// overlapping intervals, but every seed's difference favours up
		row("up", 1, "x", 2, 4, 6), row("down", 1, "x", 1.9, 3.9, 5.9),
		// ε curves for dominates and range: a above b at ε 2 and 3, equal at 1
		row("a", 1, "x", 1, 1, 1), row("a", 2, "x", 5, 6, 7), row("a", 3, "x", 9, 9.5, 10),
		row("b", 1, "x", 1, 1, 1), row("b", 2, "x", 1, 2, 3), row("b", 3, "x", 4, 5, 6),
		// just below b at ε 1 (by 0.001, settled), above at ε 2 and 3
		row("c", 1, "x", 0.999, 0.9991, 0.9989), row("c", 2, "x", 5, 6, 7), row("c", 3, "x", 9, 9.5, 10),
		// above b at ε 2 and 3, its interval straddling b's value at ε 1
		row("d", 1, "x", 0.5, 1.5, 0.9), row("d", 2, "x", 5, 6, 7), row("d", 3, "x", 9, 9.5, 10),
		// a capped search that stopped: ∞ on every seed
		row("capped", 1, "x", math.Inf(1), math.Inf(1), math.Inf(1)),
		// a rank chain: steps 10, 3, 0.5, 0.2 (per seed, same on each)
		row("r1", 1, "x", 0, 0.1, 0.2), row("r2", 1, "x", 10, 10.1, 10.2), row("r3", 1, "x", 13, 13.1, 13.2),
		row("r4", 1, "x", 13.5, 13.6, 13.7), row("r5", 1, "x", 13.7, 13.8, 13.9),
	}}
	for _, c := range []struct {
		name  string
		claim Claim
		want  string
	}{
		{"greater holds", Claim{Rule: "greater", Stat: "x", Points: []Point{pt("hi", 1), pt("mid", 1)}}, Holds},
		{"greater fails", Claim{Rule: "greater", Stat: "x", Points: []Point{pt("lo", 1), pt("mid", 1)}}, Fails},
		{"greater overlaps", Claim{Rule: "greater", Stat: "x", Points: []Point{pt("near-mid", 1), pt("mid", 1)}}, Unsettled},
		{"one seed of a sampled value", Claim{Rule: "greater", Stat: "x", Points: []Point{pt("one", 1), pt("lo", 4)}}, NotRun},
		{"one seed, no interval", Claim{Rule: "greater", Stat: "x", Points: []Point{pt("one", 1), pt("lo", 1)}}, Unsettled},
		{"paired seeds decide", Claim{Rule: "greater", Stat: "x", Points: []Point{pt("up", 1), pt("down", 1)}}, Holds},
		{"greatest", Claim{Rule: "greatest", Stat: "x", Points: []Point{pt("hi", 1), pt("mid", 1), pt("lo", 1)}}, Holds},
		{"greatest fails", Claim{Rule: "greatest", Stat: "x", Points: []Point{pt("mid", 1), pt("hi", 1), pt("lo", 1)}}, Fails},
		{"least", Claim{Rule: "least", Stat: "x", Points: []Point{pt("lo", 1), pt("mid", 1), pt("hi", 1)}}, Holds},
		{"increasing", Claim{Rule: "increasing", Stat: "x", Points: []Point{pt("lo", 1), pt("mid", 1), pt("hi", 1)}}, Holds},
		{"decreasing fails", Claim{Rule: "decreasing", Stat: "x", Points: []Point{pt("lo", 1), pt("mid", 1), pt("hi", 1)}}, Fails},
		{"at-least holds", Claim{Rule: "at-least", Threshold: 3, Stat: "x", Points: []Point{pt("mid", 1)}}, Holds},
		{"at-least straddled", Claim{Rule: "at-least", Threshold: 6, Stat: "x", Points: []Point{pt("mid", 1)}}, Unsettled},
		{"at-most fails", Claim{Rule: "at-most", Threshold: 3, Stat: "x", Points: []Point{pt("mid", 1)}}, Fails},
		{"dominates: never below, above somewhere", Claim{Rule: "dominates", Stat: "x", Epsilons: []float64{1, 2, 3}, Points: []Point{{Analysis: "a", Setting: "b"}, {Analysis: "a", Setting: "a"}}}, Holds},
		{"dominates fails where below", Claim{Rule: "dominates", Stat: "x", Epsilons: []float64{1, 2, 3}, Points: []Point{{Analysis: "a", Setting: "a"}, {Analysis: "a", Setting: "b"}}}, Fails},
		{"dominates: a tie everywhere does not hold", Claim{Rule: "dominates", Stat: "x", Epsilons: []float64{1}, Points: []Point{{Analysis: "a", Setting: "b"}, {Analysis: "a", Setting: "a"}}}, Fails},
		// It held while an ε it needs was unsettled (the IMDb-vs-Enron rows).
		{"dominates: one ε open is unsettled", Claim{Rule: "dominates", Stat: "x", Epsilons: []float64{1, 2, 3}, Points: []Point{{Analysis: "a", Setting: "b"}, {Analysis: "a", Setting: "d"}}}, Unsettled},
		{"dominates: a settled but tiny reversal", Claim{Rule: "dominates", Stat: "x", Epsilons: []float64{1, 2, 3}, Points: []Point{{Analysis: "a", Setting: "b"}, {Analysis: "a", Setting: "c"}}}, Fails},
		{"dominates: within the margin a tie", Claim{Rule: "dominates", Stat: "x", Margin: 0.01, Epsilons: []float64{1, 2, 3}, Points: []Point{{Analysis: "a", Setting: "b"}, {Analysis: "a", Setting: "c"}}}, Holds},
		{"range holds at 2 ε", Claim{Rule: "range", Stat: "x", Threshold: 3, Min: 2, Epsilons: []float64{1, 2, 3}, Points: []Point{{Analysis: "a", Setting: "a"}}}, Holds},
		{"range: too few ε can hold", Claim{Rule: "range", Stat: "x", Threshold: 11, Min: 2, Epsilons: []float64{1, 2, 3}, Points: []Point{{Analysis: "a", Setting: "a"}}}, Fails},
		{"far-greater holds", Claim{Rule: "far-greater", Factor: 5, Stat: "x", Points: []Point{pt("hi", 1), pt("tiny", 1)}}, Holds},
		{"far-greater straddled", Claim{Rule: "far-greater", Factor: 10, Stat: "x", Points: []Point{pt("hi", 1), pt("tiny", 1)}}, Unsettled},
		{"far-greater fails", Claim{Rule: "far-greater", Factor: 20, Stat: "x", Points: []Point{pt("hi", 1), pt("tiny", 1)}}, Fails},
		// ∞ is a capped search's "at least the cap", no more.
		{"far-greater: ∞ at least the cap", Claim{Rule: "far-greater", Factor: 10, Cap: 100, Stat: "x", Points: []Point{pt("capped", 1), pt("mid", 1)}}, Holds},
		{"far-greater: ∞ below, a finite value cannot be 10 times it", Claim{Rule: "far-greater", Factor: 10, Cap: 100, Stat: "x", Points: []Point{pt("hi", 1), pt("capped", 1)}}, Fails},
		{"within-factor holds", Claim{Rule: "within-factor", Factor: 3, Stat: "x", Points: []Point{pt("hi", 1), pt("near-mid", 1)}}, Holds},
		{"within-factor fails", Claim{Rule: "within-factor", Factor: 2, Stat: "x", Points: []Point{pt("hi", 1), pt("tiny", 1)}}, Fails},
		{"first step the largest", Claim{Rule: "flattens", After: 2, Fraction: 1, Stat: "x", Points: []Point{pt("r1", 1), pt("r2", 1), pt("r3", 1), pt("r4", 1), pt("r5", 1)}}, Holds},
		{"little beyond the 3rd", Claim{Rule: "flattens", After: 3, Fraction: 0.25, Stat: "x", Points: []Point{pt("r1", 1), pt("r2", 1), pt("r3", 1), pt("r4", 1), pt("r5", 1)}}, Holds},
		{"the 3rd's step is big", Claim{Rule: "flattens", After: 2, Fraction: 0.1, Stat: "x", Points: []Point{pt("r1", 1), pt("r2", 1), pt("r3", 1), pt("r4", 1), pt("r5", 1)}}, Fails},
	} {
		a := decideOn(t, c.claim, tb)
		if a.Verdict != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, a.Verdict, a.Reason, c.want)
		}
		if (a.Verdict == Holds) != (a.Reason == "") {
			t.Errorf("%s: verdict %s with reason %q", c.name, a.Verdict, a.Reason)
		}
	}
}

// TestRangeIdentity: an ε where the mechanism leaves nearly every token
// unchanged counts for neither side of a range (the loss there says
// nothing), and the shares are shown.
func TestRangeIdentity(t *testing.T) {
	u := func(eps, diff, unchanged float64) results.Row {
		return results.Row{Setting: "m", Mode: "train", Epsilon: eps, Seeds: 3, Diff: diff, DiffCI: 0.005, DiffSeeds: 3, Unchanged: unchanged}
	}
	tb := tables{rows: []results.Row{u(1, -0.2, 0.01), u(10, -0.01, 0.5), u(50, 0, 0.995), u(100, 0, 1)}}
	c := Claim{Rule: "range", Stat: "Δ accuracy", Threshold: -0.02, Min: 2, Identity: 0.99, Epsilons: []float64{1, 10, 50, 100}, Points: []Point{{Setting: "m", Mode: "train"}}}
	a := decideOn(t, c, tb)
	if a.Verdict != Fails || !strings.Contains(a.Detail, "near the identity (≥ 99% unchanged) at ε 50 (99.5% unchanged), 100 (100.0% unchanged)") {
		t.Errorf("%s: %s; %s, want does not hold: only ε 10 is informative and within the bound", a.Verdict, a.Reason, a.Detail)
	}
	c.Identity = 0
	if a := decideOn(t, c, tb); a.Verdict != Holds {
		t.Errorf("without the identity cut: %s, want holds (ε 10, 50, 100)", a.Verdict)
	}
}

// TestIntervals: each basis of an interval on a known case.
func TestIntervals(t *testing.T) {
	exact := results.StatRow{Analysis: "a", Setting: "s", Epsilon: 1, Seeds: 1, Names: []string{"N"}, Mean: []float64{90}, CI: []float64{math.NaN()}, Method: "exact"}
	simulated := exact
	simulated.Interval = map[string][2]float64{"N": {80, 100}}
	draws := results.StatRow{Analysis: "a", Setting: "s", Epsilon: 1, Seeds: 1, Names: []string{"E_M"}, Mean: []float64{0.3}, CI: []float64{math.NaN()}, Method: "sampled (100 draws per word)", Interval: map[string][2]float64{"E_M": {0.28, 0.33}}}
	sample := results.StatRow{Analysis: "a", Setting: "s", Seeds: 1, Names: []string{"d1 p50"}, Mean: []float64{2.2}, CI: []float64{math.NaN()}, Method: "sampled words: exact search", Interval: map[string][2]float64{"d1 p50": {2.1, 2.3}}}
	bracket := row("s", 0, "ε @ N_w 0.1", 14, 14, 14)
	bracket.Bracket = map[string][2]float64{"ε @ N_w 0.1": {12.5, 15.8}}
	worst := results.StatRow{Analysis: "a", Setting: "s", Epsilon: 5, Seeds: 3, Names: []string{"S_w min"}, Mean: []float64{450}, CI: []float64{50}, Series: map[string][]float64{"S_w": {500, 420, 900, 610}}}
	worstDrawn := results.StatRow{Analysis: "a", Setting: "s", Epsilon: 5, Seeds: 3, Names: []string{"S_w min", "N_w max"}, Method: "sampled (1000 draws per word)",
		Series: map[string][]float64{"S_w": {500, 301, 900}, "N_w": {12, 431, 3}}}
	for _, c := range []struct {
		name, stat string
		row        results.StatRow
		basis      string
		mean       float64
		lo, hi     float64
	}{
		{"exact", "N", exact, BasisExact, 90, 90, 90},
		{"simulated votes", "N", simulated, BasisSimulated, 90, 80, 100},
		{"draws", "E_M", draws, BasisDraws, 0.3, 0.28, 0.33},
		{"sampled words", "d1 p50", sample, BasisSample, 2.2, 2.1, 2.3},
		{"search bracket, seeds equal", "ε @ N_w 0.1", bracket, BasisBracket, 14, 12.5, 15.8},
		{"worst over every word", "S_w min", worst, BasisWorst, 420, 420, 420},
		// A worst word's count over 1,000 draws is known to its draws'
		// interval (it was given a zero-width one: 301 held against 300).
		{"worst word's distinct outputs over its draws", "S_w min", worstDrawn, BasisWorst, 301, 301 - 1.96*math.Sqrt(301), 301 + 1.96*math.Sqrt(301)},
		{"worst word's unchanged count over its draws", "N_w max", worstDrawn, BasisWorst, 431, 400.628, 461.900},
		{"t over seeds", "x", row("s", 1, "x", 1, 2, 3), BasisSeeds, 2, 2 - 4.303*1/math.Sqrt(3), 2 + 4.303*1/math.Sqrt(3)},
		{"seeds equal", "x", row("s", 1, "x", 2, 2, 2), BasisEqual, 2, 2, 2},
	} {
		e := analysisValue(c.row, c.stat)
		if e.Basis != c.basis || e.Mean != c.mean || math.Abs(e.Lo-c.lo) > 1e-3 || math.Abs(e.Hi-c.hi) > 1e-3 {
			t.Errorf("%s: %s %v [%v, %v], want %s %v [%v, %v]", c.name, e.Basis, e.Mean, e.Lo, e.Hi, c.basis, c.mean, c.lo, c.hi)
		}
	}
	if e := analysisValue(row("s", 1, "x", 3), "x"); e.known() || e.Basis != BasisOneSeed {
		t.Errorf("one seed of a sampled value: %+v, want no interval", e)
	}
	// The worst case's Clopper–Pearson share: with none of n = 3,000
	// sampled words below the bar, at most 1 − 0.05^(1/3000) ≈ 0.0999%.
	g := []group{{values: []Estimate{{Basis: BasisWorst, Words: 3000}}}}
	if n := worstNote(g); !strings.Contains(n, "3000 sampled words") || !strings.Contains(n, "at most 0.1% of the words") {
		t.Errorf("worst-case note %q", n)
	}
	// A point matched where p0 crosses 0.5 between ε 2 (0.4, N 20) and
	// ε 4 (0.6, N 5): N interpolated on a log scale, 10, within [5, 20].
	m := tables{stats: []results.StatRow{
		{Analysis: "q", Setting: "s", Epsilon: 2, Seeds: 1, Names: []string{"p0", "N"}, Mean: []float64{0.4, 20}, CI: []float64{math.NaN(), math.NaN()}, Method: "exact"},
		{Analysis: "q", Setting: "s", Epsilon: 4, Seeds: 1, Names: []string{"p0", "N"}, Mean: []float64{0.6, 5}, CI: []float64{math.NaN(), math.NaN()}, Method: "exact"},
	}}
	e := m.lookup(Point{Analysis: "q", Setting: "s", Match: &Match{Stat: "p0", Value: 0.5}}, "N")
	if e.Basis != BasisInterp || math.Abs(e.Mean-10) > 1e-9 || e.Lo != 5 || e.Hi != 20 {
		t.Errorf("matched N: %+v, want 10 in [5, 20]", e)
	}
	if e := m.lookup(Point{Analysis: "q", Setting: "s", Match: &Match{Stat: "p0", Value: 0.9}}, "N"); e.Found {
		t.Errorf("a match the grid never reaches: %+v, want none", e)
	}
	// Two searches' results are compared by their brackets, not by the
	// per-seed differences of the values they stopped at.
	b2 := row("s", 0, "ε @ N_w 0.2", 15, 15, 15)
	b2.Bracket = map[string][2]float64{"ε @ N_w 0.2": {13, 17}}
	if c := compare(analysisValue(b2, "ε @ N_w 0.2"), analysisValue(bracket, "ε @ N_w 0.1")); c != cmpOverlap {
		t.Errorf("brackets [13, 17] against [12.5, 15.8]: %d, want them overlapping (unsettled)", c)
	}
	// A pooled point: the mean over ε per seed, then over seeds.
	pool := tables{stats: []results.StatRow{row("s", 1, "x", 1, 2, 3), row("s", 5, "x", 3, 4, 5)}}
	if e := pool.lookup(Point{Analysis: "a", Setting: "s", Epsilons: []float64{1, 5}}, "x"); e.Mean != 3 || e.Seeds != 3 || e.Basis != BasisSeeds {
		t.Errorf("pooled: %+v, want 3 over 3 seeds", e)
	}
}

// TestMagnitude: xp ÷ published within the band reads the same size,
// outside it differs; a bound is met or missed; a difference is read in
// the claim's units.
func TestMagnitude(t *testing.T) {
	x := func(m float64) Estimate { return Estimate{Mean: m, Lo: m * 0.9, Hi: m * 1.1, Found: true} }
	pub := func(v float64, bound string) Published { return Published{Value: v, Bound: bound, Set: true} }
	for _, c := range []struct {
		name      string
		claim     Claim
		xs        []Estimate
		verdict   string
		textParts []string
	}{
		{"same size", Claim{Published: []Published{pub(0.04, "")}}, []Estimate{x(0.05)}, SameSize, []string{"×1.25 [×1.125, ×1.375]"}},
		{"half is the band's edge", Claim{Published: []Published{pub(0.1, "")}}, []Estimate{x(0.05)}, SameSize, []string{"×0.5"}},
		{"differs", Claim{Published: []Published{pub(27.8, ""), pub(20.4, "")}}, []Estimate{x(3.75), x(20)}, Differs, []string{"×0.1349", "×0.9804"}},
		{"below a lower bound", Claim{Published: []Published{pub(3e6, ">")}}, []Estimate{x(4173)}, Differs, []string{"×0.001391 the published bound >3e+06"}},
		{"above a lower bound", Claim{Published: []Published{pub(50, ">")}}, []Estimate{x(80)}, SameSize, []string{"above the published bound >50"}},
		{"difference in band", Claim{Magnitude: "difference", Band: []float64{-0.5, 0.5}, Published: []Published{pub(0.12, "")}}, []Estimate{x(0.05)}, SameSize, []string{"-0.07"}},
		{"nothing published", Claim{Published: []Published{{}}}, []Estimate{x(1)}, "", nil},
	} {
		c.claim.Points = make([]Point, len(c.xs))
		m := magnitude(&c.claim, [][]Estimate{c.xs}, nil)
		if m.Verdict != c.verdict {
			t.Errorf("%s: %q (%s), want %q", c.name, m.Verdict, m.Text, c.verdict)
		}
		for _, p := range c.textParts {
			if !strings.Contains(m.Text, p) {
				t.Errorf("%s: %q lacks %q", c.name, m.Text, p)
			}
		}
	}
}

// TestParseErrors: a claims file's mistakes are refused at their line.
func TestParseErrors(t *testing.T) {
	head := "records: r\npapers: [{id: p, cite: P}]\nruns:\n  - {name: a, config: a.yaml}\nclaims:\n"
	claim := "  - {paper: p, item: i, cites: c, kind: conclusion, says: s, rule: greater, stat: x, run: a, points: [{analysis: q, setting: s}, {analysis: q, setting: t}]}\n"
	for _, c := range []struct{ name, text, want string }{
		{"good", head + claim, ""},
		{"unknown rule", head + strings.Replace(claim, "greater", "bigger", 1), "f.yaml:6: rule \"bigger\""},
		{"unknown run", head + strings.Replace(claim, "run: a", "run: b", 1), "f.yaml:6: point 1 reads run \"b\""},
		{"unknown paper", head + strings.Replace(claim, "paper: p", "paper: q", 1), "f.yaml:6: paper \"q\""},
		{"no kind", head + strings.Replace(claim, "kind: conclusion, ", "", 1), "f.yaml:6: kind \"\""},
		{"greater of 3", head + strings.Replace(claim, "]}\n", ", {analysis: q, setting: u}]}\n", 1), "f.yaml:6: rule greater reads 2 points"},
		{"published count", head + strings.Replace(claim, "run: a,", "run: a, published: [1],", 1), "f.yaml:6: 1 published values for 2 points"},
		{"bad bound", head + strings.Replace(claim, "run: a,", "run: a, published: [\"~3\", 1],", 1), "published value \"~3\""},
		{"overrides unexplained", strings.Replace(head, "config: a.yaml}", "config: a.yaml, set: [\"seeds=[1]\"]}", 1) + claim, "f.yaml:4: run a has overrides"},
		{"unknown key", head + strings.Replace(claim, "says: s", "say: s", 1), "field say not found"},
		// A rule's parameters are its own: greater reads no factor.
		{"another rule's key", head + strings.Replace(claim, "run: a,", "run: a, factor: 3,", 1), "f.yaml:6: factor is read by rule far-greater, matched-far-greater, within-factor, not by greater"},
		{"by_run of another rule", head + strings.Replace(claim, "run: a,", "run: a, by_run: a, by_analysis: q,", 1), "by_analysis is read by rule matched-gain, not by greater"},
	} {
		_, err := Parse("f.yaml", []byte(c.text))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestCheckPlan: a run's plan read back from its JSON is its config with
// its overrides (an empty list there is no list here); a plan from other
// overrides is refused, naming the key; where the run was written, its
// threads and cache do not count.
func TestCheckPlan(t *testing.T) {
	dir := t.TempDir()
	cfg := "name: a\nembedding:\n  path: e.vec\nanalysis:\n  kind: neighbours\nseeds: [1]\n"
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &File{Path: filepath.Join(dir, "claims.yaml"), Records: "."}
	load := func(sets ...string) experiments.Config {
		c, err := experiments.Load(filepath.Join(dir, "a.yaml"), experiments.Options{Set: sets})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(c.Clone()) // as the runner writes its plan: the clone holds an empty list of mechanisms
		var back experiments.Config
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		return back
	}
	r := Run{Name: "a", Config: "a.yaml", Set: []string{"analysis.words=10"}}
	if err := f.CheckPlan(r, load("analysis.words=10", "output=elsewhere", "threads=1", "cache=c")); err != nil {
		t.Errorf("the run's own plan: %v", err)
	}
	if err := f.CheckPlan(r, load("analysis.words=20")); err == nil || !strings.Contains(err.Error(), "analysis.params.words is 20 there, 10 in the config") {
		t.Errorf("a plan of other overrides: %v, want it refused naming words", err)
	}
	if err := f.CheckPlan(r, load("analysis.words=10", "seeds=[1, 2]")); err == nil || !strings.Contains(err.Error(), "seeds is [1,2] there, [1] in the config") {
		t.Errorf("a plan of other seeds: %v", err)
	}
	// a parameter spelled out at its default is the same experiment, on
	// either side
	spelled := Run{Name: "a", Config: "a.yaml", Set: []string{"analysis.words=10", "analysis.percentiles=[5, 20, 50, 80, 95]"}}
	if err := f.CheckPlan(spelled, load("analysis.words=10")); err != nil {
		t.Errorf("a default spelled out in the run's overrides: %v", err)
	}
	if err := f.CheckPlan(r, load("analysis.words=10", "analysis.percentiles=[5, 20, 50, 80, 95]")); err != nil {
		t.Errorf("a default spelled out in the plan: %v", err)
	}
	if err := f.CheckPlan(spelled, load("analysis.words=10", "analysis.percentiles=[5, 50, 95]")); err == nil || !strings.Contains(err.Error(), "percentiles") {
		t.Errorf("another value than the default: %v", err)
	}
}

// TestGroupLabels: a group is named by what its points share and the
// other groups' do not.
func TestGroupLabels(t *testing.T) {
	gs := [][]Point{
		{{Setting: "custext k=20 mapping=aggressive", Mode: "both", Epsilon: 1}, {Setting: "custext k=20 mapping=balanced", Mode: "both", Epsilon: 1}},
		{{Setting: "custext k=50 mapping=aggressive", Mode: "both", Epsilon: 1}, {Setting: "custext k=50 mapping=balanced", Mode: "both", Epsilon: 1}},
	}
	if got := groupLabels(gs); strings.Join(got, "|") != "k=20|k=50" {
		t.Errorf("by K: %q", got)
	}
	eps := [][]Point{{{Setting: "a", Epsilon: 1}, {Setting: "b", Epsilon: 1}}, {{Setting: "a", Epsilon: 5}, {Setting: "b", Epsilon: 5}}}
	if got := groupLabels(eps); strings.Join(got, "|") != "ε=1|ε=5" {
		t.Errorf("by ε: %q", got)
	}
	if got := groupLabels([][]Point{{{Setting: "a"}}, {{Setting: "a"}}}); strings.Join(got, "|") != "group 1|group 2" {
		t.Errorf("nothing apart: %q", got)
	}
}

// TestMatchedGain: the gain at matched privacy is read against a
// threshold, its interval widened to the reference's two grid points
// around the match ("up to 50%" held as a gain above 0 with the
// interpolation's guess taken for exact).
func TestMatchedGain(t *testing.T) {
	two := func(setting string, eps, p, l float64) results.StatRow {
		ps, ls := []float64{p - 0.001, p, p + 0.001}, []float64{l - 0.001, l, l + 0.001}
		mp, sdp, cip := stats.MeanCI(ps)
		ml, sdl, cil := stats.MeanCI(ls)
		by := seeds("P", ps...)
		by["L"] = seeds("L", ls...)["L"]
		return results.StatRow{Analysis: "a", Setting: setting, Epsilon: eps, Seeds: 3, Names: []string{"P", "L"},
			Mean: []float64{mp, ml}, SD: []float64{sdp, sdl}, CI: []float64{cip, cil}, BySeed: by, Method: "sampled"}
	}
	// At P = 0.7 the reference's loss is 0.3 interpolated, between 0.4 and
	// 0.2 at its grid points: the gain 2/3, anywhere in [0.5, 0.75].
	tb := tables{stats: []results.StatRow{two("ref", 1, 0.9, 0.4), two("ref", 2, 0.5, 0.2), two("ref", 3, 0.1, 0.1), two("v", 1, 0.7, 0.1)}}
	for _, c := range []struct {
		threshold float64
		want      string
	}{{0, Holds}, {0.25, Holds}, {0.6, Unsettled}, {0.8, Fails}} {
		cl := Claim{Rule: "matched-gain", Stat: "L", By: "P", Threshold: c.threshold, Points: []Point{{Analysis: "a", Setting: "ref"}, {Analysis: "a", Setting: "v"}}}
		a := decideOn(t, cl, tb)
		if a.Verdict != c.want {
			t.Errorf("threshold %v: %s (%s), want %s", c.threshold, a.Verdict, a.Reason, c.want)
		}
	}
	// A reference loss within the margin of 0 is not read: a share of a
	// loss that small is noise (here 0.3 at the match, margin 0.35).
	cl := Claim{Rule: "matched-gain", Stat: "L", By: "P", Margin: 0.35, Points: []Point{{Analysis: "a", Setting: "ref"}, {Analysis: "a", Setting: "v"}}}
	if a := decideOn(t, cl, tb); a.Verdict != Unsettled || !strings.Contains(a.Reason, "no ε") {
		t.Errorf("a reference loss within the margin: %s (%s), want unsettled, nothing read", a.Verdict, a.Reason)
	}
}

// TestSettle: an unsettled claim read over seeds says how many seeds
// would settle it four times in five at the difference and spread
// measured now, and what they cost.
func TestSettle(t *testing.T) {
	// Paired by seed, "up" is above "down" by 1, 2, 0 (mean 1, sd 1): 3
	// seeds leave the interval across 0; at 7 it would just reach 0 (one
	// chance in two), at 10 clear it four times in five.
	tb := tables{stats: []results.StatRow{row("up", 1, "x", 2, 4, 6), row("down", 1, "x", 1, 2, 6)}, seedSeconds: 120}
	a := decideOn(t, Claim{Rule: "greater", Stat: "x", Points: []Point{pt("up", 1), pt("down", 1)}}, tb)
	if a.Verdict != Unsettled || a.Settle == nil {
		t.Fatalf("%s, settle %v: want unsettled with what would settle it", a.Verdict, a.Settle)
	}
	if a.Settle.Seeds != 10 || a.Settle.Now != 3 {
		t.Errorf("settle %+v, want 10 seeds (3 now)", *a.Settle)
	}
	if txt := a.Settle.Text(); !strings.Contains(txt, "about 10 seeds would settle it 4 times in 5") || !strings.Contains(txt, "up ε=1 vs down ε=1") || !strings.Contains(txt, "about 14 min of compute") || !strings.Contains(txt, "7 seeds more × 2 min a seed") {
		t.Errorf("settle text %q", txt)
	}
	// A difference of 0 is settled by no number of seeds.
	tb = tables{stats: []results.StatRow{row("p", 1, "x", 1, 2, 3), row("q", 1, "x", 2, 1, 3)}}
	a = decideOn(t, Claim{Rule: "greater", Stat: "x", Points: []Point{pt("p", 1), pt("q", 1)}}, tb)
	if a.Settle == nil || a.Settle.Seeds <= maxSeeds || !strings.Contains(a.Settle.Text(), "would not settle it") {
		t.Errorf("a zero difference: %+v", a.Settle)
	}
	// A claim that holds says nothing of it.
	a = decideOn(t, Claim{Rule: "greater", Stat: "x", Points: []Point{pt("up", 1), pt("q", 1)}}, tables{stats: []results.StatRow{row("up", 1, "x", 10, 11, 12), row("q", 1, "x", 2, 1, 3)}})
	if a.Verdict != Holds || a.Settle != nil {
		t.Errorf("a settled claim: %s, %+v", a.Verdict, a.Settle)
	}
}

// TestMatchedFarGreater: at each ε of the first setting, the second's
// value at the same privacy lies anywhere between its two grid values
// around the match; ∞ is at least the cap.
func TestMatchedFarGreater(t *testing.T) {
	exact := func(setting string, eps, p, n float64) results.StatRow {
		return results.StatRow{Analysis: "a", Setting: setting, Epsilon: eps, Seeds: 1, Names: []string{"p0", "N"},
			Mean: []float64{p, n}, SD: []float64{0, 0}, CI: []float64{math.NaN(), math.NaN()}, Method: "exact"}
	}
	theirs := []results.StatRow{exact("t", 1, 0.01, 1000), exact("t", 2, 0.05, 100), exact("t", 3, 0.2, 5)}
	for _, c := range []struct {
		name string
		mine []results.StatRow
		want string
	}{
		// p0 0.03 lies between t's 0.01 (N 1000) and 0.05 (N 100): 2,000
		// is ×2 to ×20: unsettled; 20,000 is ×20 or more: holds.
		{"straddles", []results.StatRow{exact("m", 1, 0.03, 2000)}, Unsettled},
		{"holds", []results.StatRow{exact("m", 1, 0.03, 20000)}, Holds},
		{"fails", []results.StatRow{exact("m", 1, 0.1, 40)}, Fails},
		{"∞ is at least the cap", []results.StatRow{exact("m", 1, 0.1, math.Inf(1))}, Holds},
		{"outside the second's range", []results.StatRow{exact("m", 1, 0.5, 10)}, Unsettled},
	} {
		tb := tables{stats: append(slices.Clone(theirs), c.mine...)}
		cl := Claim{Rule: "matched-far-greater", Stat: "N", By: "p0", Factor: 10, Cap: 1000, Points: []Point{{Analysis: "a", Setting: "m"}, {Analysis: "a", Setting: "t"}}}
		if a := decideOn(t, cl, tb); a.Verdict != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, a.Verdict, a.Reason, c.want)
		}
	}
}

// TestSettlePairs: what would settle a claim reads the pairs its rule
// compares — for least, the first point against each other, not the
// others against each other (a tie between two others made "the
// conservative mapping is the worst" read as needing over 200 seeds).
func TestSettlePairs(t *testing.T) {
	tb := tables{stats: []results.StatRow{
		row("worst", 1, "x", 1, 3, 2), // below b by 1, 1, 2 and c by 1, 1, 2.1, seed by seed
		row("b", 1, "x", 2, 4, 4),
		row("c", 1, "x", 2, 4, 4.1),
	}}
	a := decideOn(t, Claim{Rule: "least", Stat: "x", Points: []Point{pt("worst", 1), pt("b", 1), pt("c", 1)}}, tb)
	if a.Settle == nil || a.Settle.Seeds > maxSeeds || strings.Contains(a.Settle.What, "b ε=1 vs c") {
		t.Errorf("%s: settle %+v, want the pairs of worst with b and with c", a.Verdict, a.Settle)
	}
}

// TestCappedMagnitude: a value a capped search recorded as ∞ is set
// beside a published one as "at least the cap", never ×∞, and decides
// the magnitude only where that bound alone does (∞ read "above the
// published bound >3e6" with a cap of 10,000).
func TestCappedMagnitude(t *testing.T) {
	inf := Estimate{Mean: math.Inf(1), Lo: math.Inf(1), Hi: math.Inf(1), Found: true, Basis: BasisSimulated}
	for _, c := range []struct {
		pub      Published
		verdict  string
		contains string
	}{
		{Published{Value: 4255, Set: true}, Differs, "≥ ×2.35 (the cap)"},
		{Published{Value: 8000, Set: true}, "", "≥ ×1.25 (the cap): not compared"},
		{Published{Value: 3e6, Bound: ">", Set: true}, "", "not compared with the published bound"},
		{Published{Value: 5000, Bound: ">", Set: true}, SameSize, "above the published bound"},
	} {
		cl := &Claim{Cap: 10000, Published: []Published{c.pub}, Points: []Point{{Analysis: "a", Setting: "s"}}}
		m := magnitude(cl, [][]Estimate{{inf}}, nil)
		if m.Verdict != c.verdict || !strings.Contains(m.Text, c.contains) || strings.Contains(m.Text, "∞") {
			t.Errorf("published %v: %q %q, want %q containing %q", c.pub, m.Verdict, m.Text, c.verdict, c.contains)
		}
	}
}

// TestMatchedGainAcrossRuns: with by_run and by_analysis, matched-gain
// reads the privacy of each point's setting from another run's analysis
// rows at the same ε and pairs it by seed with the point's utility loss
// (accuracy loss: the baseline's accuracy minus the cell's); an ε only
// one of the runs has is not read.
func TestMatchedGainAcrossRuns(t *testing.T) {
	seedsOf := func(vs ...float64) map[uint64]float64 {
		m := map[uint64]float64{}
		for i, v := range vs {
			m[uint64(i+1)] = v
		}
		return m
	}
	util := func(setting string, eps float64, diffs ...float64) results.Row {
		m, _, ci := stats.MeanCI(diffs)
		return results.Row{Setting: setting, Mode: "both", Epsilon: eps, Seeds: len(diffs), Diff: m, DiffCI: ci, DiffSeeds: len(diffs),
			Accuracy: 0.8 + m, BySeed: results.BySeed{"Δ accuracy": seedsOf(diffs...)}}
	}
	priv := func(setting string, eps float64, ps ...float64) results.StatRow {
		m, sd, ci := stats.MeanCI(ps)
		return results.StatRow{Analysis: "bayes", Setting: setting, Epsilon: eps, Seeds: len(ps), Names: []string{"P"},
			Mean: []float64{m}, SD: []float64{sd}, CI: []float64{ci}, BySeed: results.BySeed{"P": seedsOf(ps...)}, Method: "sampled"}
	}
	// The reference loses 0.4 at P 0.9 and 0.2 at P 0.5: at v's P 0.7 its
	// loss is 0.3 interpolated (0.2 to 0.4 at the grid), v's 0.1: a gain
	// of 2/3, anywhere in [0.5, 0.75]. v's ε 3 has no privacy row.
	utility := tables{rows: []results.Row{
		util("ref", 1, -0.401, -0.4, -0.399), util("ref", 2, -0.201, -0.2, -0.199),
		util("v", 1, -0.101, -0.1, -0.099), util("v", 3, -0.5, -0.5, -0.5),
	}}
	attack := tables{stats: []results.StatRow{
		priv("ref", 1, 0.899, 0.9, 0.901), priv("ref", 2, 0.499, 0.5, 0.501), priv("v", 1, 0.699, 0.7, 0.701),
	}}
	for _, c := range []struct {
		threshold float64
		want      string
	}{{0.25, Holds}, {0.6, Unsettled}, {0.8, Fails}} {
		cl := Claim{Rule: "matched-gain", Stat: "accuracy loss", By: "P", ByRun: "attack", ByAnalysis: "bayes", Threshold: c.threshold,
			Run: "utility", Paper: "p", Item: "i", Cites: "c", Says: "s", Kind: Conclusion,
			Points: []Point{{Mode: "both", Setting: "ref"}, {Mode: "both", Setting: "v"}}}
		if err := cl.check(map[string]bool{"p": true}, map[string]bool{"utility": true, "attack": true}); err != nil {
			t.Fatal(err)
		}
		f := &File{Path: "claims.yaml", Records: ".", Papers: []Paper{{ID: "p", Cite: "P"}}}
		a, err := f.decide(&cl, func(name string) (tables, string, error) {
			return map[string]tables{"utility": utility, "attack": attack}[name], name, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if a.Verdict != c.want {
			t.Errorf("threshold %v: %s (%s), want %s", c.threshold, a.Verdict, a.Reason, c.want)
		}
	}
	// by_run alone, or on another rule, is refused.
	for _, cl := range []Claim{
		{Rule: "matched-gain", Stat: "accuracy loss", By: "P", ByRun: "attack"},
		{Rule: "greater", Stat: "accuracy", ByRun: "attack", ByAnalysis: "bayes"},
	} {
		cl.Run, cl.Paper, cl.Item, cl.Cites, cl.Says, cl.Kind = "utility", "p", "i", "c", "s", Conclusion
		cl.Points = []Point{{Mode: "both", Setting: "ref", Epsilon: 1}, {Mode: "both", Setting: "v", Epsilon: 1}}
		if err := cl.check(map[string]bool{"p": true}, map[string]bool{"utility": true, "attack": true}); err == nil {
			t.Errorf("%s with by_run %q, by_analysis %q: accepted", cl.Rule, cl.ByRun, cl.ByAnalysis)
		}
	}
}

// TestMatchedGreater: at each ε of the first setting, its value is above
// the second's read at equal privacy, anywhere between the second's two
// grid values around the match.
func TestMatchedGreater(t *testing.T) {
	exact := func(setting string, eps, p, a float64) results.StatRow {
		return results.StatRow{Analysis: "a", Setting: setting, Epsilon: eps, Seeds: 1, Names: []string{"p0", "acc"},
			Mean: []float64{p, a}, SD: []float64{0, 0}, CI: []float64{math.NaN(), math.NaN()}, Method: "exact"}
	}
	theirs := []results.StatRow{exact("t", 1, 0.01, 0.50), exact("t", 2, 0.05, 0.60), exact("t", 3, 0.2, 0.80)}
	for _, c := range []struct {
		name string
		mine []results.StatRow
		want string
	}{
		{"above both grid values", []results.StatRow{exact("m", 1, 0.03, 0.65)}, Holds},
		{"between them", []results.StatRow{exact("m", 1, 0.03, 0.55)}, Unsettled},
		{"below both", []results.StatRow{exact("m", 1, 0.03, 0.45)}, Fails},
		{"outside the second's range", []results.StatRow{exact("m", 1, 0.5, 0.9)}, Unsettled},
	} {
		tb := tables{stats: append(slices.Clone(theirs), c.mine...)}
		cl := Claim{Rule: "matched-greater", Stat: "acc", By: "p0", Points: []Point{{Analysis: "a", Setting: "m"}, {Analysis: "a", Setting: "t"}}}
		if a := decideOn(t, cl, tb); a.Verdict != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, a.Verdict, a.Reason, c.want)
		}
	}
}
