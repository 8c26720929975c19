package table

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	. "github.com/xp-nlp/xp/results"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/stats"
)

func rec(mode string, eps float64, seed uint64, acc float64, status string) Record {
	c := experiments.Cell{Mode: mode, Seed: seed}
	r := Record{Key: fmt.Sprintf("%s-%v-%d", mode, eps, seed), Cell: c, Status: status, Test: metrics.Classification{Accuracy: acc, MacroF1: acc / 2}}
	if mode != "none" {
		r.Cell.Mechanism, r.Cell.Epsilon, r.Notion = "laplace", eps, spec.MetricDP
		r.Privacy = map[string]metrics.Privatization{"test": {Tokens: 100, Unchanged: 20, OOV: 5, Epsilon: eps}}
	}
	return r
}

func TestTable(t *testing.T) {
	high := rec("test", 1, 1, 0.55, "ok")
	high.Privacy = map[string]metrics.Privatization{"test": {Tokens: 100, Unchanged: 0, OOV: 40, Epsilon: 1}}
	rows := Table([]Record{
		rec("test", 10, 1, 0.6, "ok"), rec("test", 10, 2, 0.8, "ok"), rec("test", 10, 3, 0, "failed"),
		rec("none", 0, 1, 0.9, "ok"), rec("train", 1, 1, 0.5, "ok"), high,
	}, TableOptions{MaxOOV: metrics.DefaultMaxOOV})
	want := []struct {
		mode string
		eps  float64
	}{{"none", 0}, {"train", 1}, {"test", 1}, {"test", 10}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	for i, w := range want {
		if rows[i].Mode != w.mode || rows[i].Epsilon != w.eps {
			t.Errorf("row %d: %s ε=%v, want %s ε=%v", i, rows[i].Mode, rows[i].Epsilon, w.mode, w.eps)
		}
	}
	r := rows[3]
	// Unchanged is over in-vocabulary tokens only: 20 of 95, not (20+5)/100.
	if r.Seeds != 2 || r.Failed != 1 || math.Abs(r.Accuracy-0.7) > 1e-12 || math.Abs(r.AccSD-math.Sqrt(0.02)) > 1e-12 ||
		math.Abs(r.Unchanged-20.0/95) > 1e-12 || math.Abs(r.OOV-0.05) > 1e-12 || r.Notion != spec.MetricDP || len(r.Flags) != 0 {
		t.Errorf("aggregate: %+v", r)
	}
	if f := rows[2].Flags; len(f) != 1 || f[0] != "test 40% OOV" {
		t.Errorf("flags of a 40%% OOV cell: %q", f)
	}
	if f := Table([]Record{high}, TableOptions{MaxOOV: 0.5})[0].Flags; len(f) != 0 {
		t.Errorf("flags with a 50%% threshold: %q", f)
	}
	md := Markdown(rows)
	// The privacy unit follows the descriptors: SanText is metric DP (the
	// text called it pure ε-DP).
	if strings.Contains(md, "SanText's pure") || !regexp.MustCompile(`ε·d_χ \([^)]*\bsantext,[^)]*\), a text`).MatchString(md) {
		t.Errorf("privacy unit misstates SanText's notion:\n%s", md)
	}
	for _, s := range []string{"| none | — | none | — | 1 | 0.9000 |", "| laplace | metric-dp | test | 10 | 2 (1 failed) | 0.7000 ± 0.1414 | [0.0000, 1.0000] | — | -0.3000 | — | 0.3500 ± 0.0707 | 21.1% | — | 5.0% |  |", "| test 40% OOV |"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
	// Seeds that agree give no interval of zero width (it read
	// [0.5450, 0.5450] where two models both predicted the majority class).
	same := Table([]Record{rec("test", 5, 1, 0.545, "ok"), rec("test", 5, 2, 0.545, "ok")}, TableOptions{})
	if md := Markdown(same); !strings.Contains(md, "| 0.5450 ± 0.0000 | — |") {
		t.Errorf("two agreeing seeds:\n%s", md)
	}
	// Two seeds' interval leaves [0, 1]: LaTeX prints it cut to the range,
	// never 0.700 ± 1.271 (it did).
	if tex := LaTeX(rows); !strings.Contains(tex, "laplace & test & 10 & 0.700 [0.000, 1.000] & -0.300 & 0.350 [0.000, 0.985] &") {
		t.Errorf("LaTeX with two seeds:\n%s", tex)
	}
	var csv strings.Builder
	if err := WriteCSV(&csv, rows); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(csv.String()), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[0], "setting,mode,epsilon,seeds") || !strings.Contains(lines[0], "unchanged_in_vocab,oov,kept_stopwords,unchanged_per_type,n_w,s_w,recovery,chance,test_n,test_set_lo95,test_set_hi95,paired_p,paired_p_holm,discordant_examples,flags") {
		t.Errorf("csv:\n%s", csv.String())
	}
}

// TestTableMeasures: the opt-in privacy measures are averaged over a
// cell's privatized splits, then over seeds, as shares; their columns and
// note appear only when some cell has them.
func TestTableMeasures(t *testing.T) {
	measured := func(seed uint64, nw, sw, recovery []float64) Record {
		r := rec("both", 5, seed, 0.7, "ok")
		r.Measures = map[string]metrics.Analysis{}
		for i, split := range []string{"train", "test"}[:len(nw)] {
			var a metrics.Analysis
			a.Add("N_w %", nw[i])
			a.Add("S_w %", sw[i])
			a.AddCI("recovery", recovery[i], recovery[i]-0.01, recovery[i]+0.01)
			r.Measures[split] = a
		}
		return r
	}
	rows := Table([]Record{measured(1, []float64{40, 20}, []float64{10, 30}, []float64{0.5, 0.3}), measured(2, []float64{50}, []float64{20}, []float64{0.6})}, TableOptions{})
	// A sampled f_M's held-out recovery is what the table shows.
	sampled := measured(3, []float64{40}, []float64{10}, []float64{0.9})
	a := sampled.Measures["train"]
	a.Add("recovery held-out", 0.1)
	sampled.Measures["train"] = a
	if r := Table([]Record{sampled}, TableOptions{})[0]; math.Abs(r.Recovery-0.1) > 1e-12 {
		t.Errorf("recovery of a sampled f_M %v, want the held-out 0.1", r.Recovery)
	}
	r := rows[0]
	// seed 1: (0.4+0.2)/2 = 0.3, seed 2: 0.5 → 0.4; S_w (0.2, 0.2) → 0.2; recovery (0.4, 0.6) → 0.5.
	if math.Abs(r.Nw-0.4) > 1e-12 || math.Abs(r.Sw-0.2) > 1e-12 || math.Abs(r.Recovery-0.5) > 1e-12 {
		t.Errorf("measures N_w %v S_w %v recovery %v, want 0.4 0.2 0.5", r.Nw, r.Sw, r.Recovery)
	}
	md := Markdown(rows)
	if !strings.Contains(md, "| N_w | S_w | token recovery | flags |") || !strings.Contains(md, "| 40.0% | 20.0% | 50.0% |") || !strings.Contains(md, "token recovery: the Bayes adversary") {
		t.Errorf("markdown of measured cells:\n%s", md)
	}
	if plain := Markdown(Table([]Record{rec("test", 1, 1, 0.5, "ok")}, TableOptions{})); strings.Contains(plain, "N_w") || strings.Contains(plain, "token recovery") {
		t.Errorf("measure columns without measures:\n%s", plain)
	}
}

func ExampleMarkdown() {
	rows := Table([]Record{
		{Key: "a", Cell: experiments.Cell{Mode: "none", Seed: 1}, Status: "ok", Test: metrics.Classification{N: 10, Accuracy: 0.9, MacroF1: 0.89, Correct: "1111111110"}},
		{Key: "b", Cell: experiments.Cell{Mechanism: "laplace", Epsilon: 10, Mode: "test", Seed: 1}, Notion: spec.MetricDP, Status: "ok",
			Test:    metrics.Classification{N: 10, Accuracy: 0.7, MacroF1: 0.68, Correct: "1011101111"},
			Privacy: map[string]metrics.Privatization{"test": {Tokens: 1000, OOV: 100, Unchanged: 450, Epsilon: 10}}},
	}, TableOptions{MaxOOV: metrics.DefaultMaxOOV})
	fmt.Print(Markdown(rows))
	// Output:
	// | mechanism | notion | mode | ε | seeds | accuracy | 95% CI | test-set 95% | Δ vs baseline (paired) | p vs baseline (Holm) | macro-F1 | unchanged (in-vocab) | unchanged per word type | OOV | flags |
	// |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|
	// | none | — | none | — | 1 | 0.9000 | — | [0.5958, 0.9821] | — | — | 0.8900 | — | — | — |  |
	// | laplace | metric-dp | test | 10 | 1 | 0.7000 | — | [0.3968, 0.8922] | -0.2000 | 1 (3) | 0.6800 | 50.0% | — | 10.0% |  |
	//
	// Mean ± sample sd over seeds; 95% CI: of the mean over seeds by Student's t (n−1 degrees of freedom; — below 2 seeds), within [0, 1]: it speaks of retraining's spread. Test-set 95%: the Wilson interval of the accuracy from the evaluated split's size alone — its own sampling error, which more seeds do not shrink (the same examples score every seed). Δ: accuracy minus the baseline's of the same seed, averaged over the seeds that have both, with its t-interval (not shown where every seed's Δ is the same). p vs baseline: the sign-flip test of the line's per-example results against the baseline's on the same examples and seeds, each example counted once with its results summed over the seeds (exact; McNemar's exact test at one seed), adjusted by Holm's method over the table's lines; the examples on which they differ in brackets; — where the records hold no per-example results. It conditions on the trained models; the seeds' spread is the Δ interval's.
	//
	// Warning: fewer than 3 seeds on some lines — their t-interval is wide (2 seeds: t(0.975, 1) = 12.7) or absent (1 seed): read the test-set interval and the paired p there.
	//
	// Privacy unit: ε is per token. Under metric DP, ε·d_χ (laplace, vickrey, mahalanobis, santext, tem; diffractor with d the distance along its line of words, metric-dp-line, whose ε is not comparable), a text of n tokens is ε·Σ d(w_i, w′_i)-private against a change of its words, so the guarantee weakens with length and distance; pure ε-DP within an output set (custext, custext+) composes to n·ε over a text; vickrey with exclude_input, santext+, truncated-gumbel give no guarantee. In mode both, training and test text are privatized independently: a text in both is exposed twice.
}

// TestAnalysisMarkdown: one table per analysis (no column of another's
// statistics), neighbours pivoted to k × percentile, ε "—" where none.
func TestAnalysisMarkdown(t *testing.T) {
	rows := []StatRow{
		{Analysis: "neighbours", Setting: "none", Seeds: 1, Names: []string{"d1 p5", "d1 p50", "d10 p5", "d10 p50"}, Mean: []float64{1, 2, 3, 4}, SD: make([]float64, 4)},
		{Analysis: "select", Setting: "vickrey", Seeds: 2, Names: []string{"E_M"}, Mean: []float64{0.5}, SD: []float64{0.1}},
	}
	got := AnalysisMarkdown(rows)
	for _, want := range []string{"| k | p5 | p50 |\n", "| 1 | 1 | 2 |\n", "| 10 | 3 | 4 |\n", "| mechanism | notion | ε | seeds | E_M |\n", "| vickrey | — | — | 2 | 0.5 ± 0.1 |\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "d1 p5") {
		t.Errorf("unpivoted neighbour columns in\n%s", got)
	}
}

// TestTypeRateChanceAttacker: the per-word-type unchanged rate weighs
// each word alike; the chance level is the evaluated split's majority
// share; an attacker's accuracy is labelled so.
func TestTypeRateChanceAttacker(t *testing.T) {
	var p metrics.Privatization
	orig := [][]string{{"a", "a", "a", "b", "oov"}}
	priv := [][]string{{"a", "x", "x", "b", "oov"}}
	p.CountTypes(orig, priv, func(w string) bool { return w != "oov" })
	p.Tokens, p.OOV, p.Unchanged = 5, 1, 2
	if p.Types != 2 || math.Abs(p.TypeUnchangedRate()-(1.0/3+1)/2) > 1e-12 {
		t.Errorf("types %d, rate %v", p.Types, p.TypeUnchangedRate())
	}
	r := rec("test", 1, 1, 0.4, "ok")
	r.Privacy = map[string]metrics.Privatization{"test": p}
	r.Test.N, r.Test.PerClass = 10, []metrics.ClassScore{{Support: 3}, {Support: 6}, {Support: 1}}
	rows := Table([]Record{r}, TableOptions{Attacker: "authorship"})
	if math.Abs(rows[0].Chance-0.6) > 1e-12 || math.Abs(rows[0].TypeUnchanged-2.0/3) > 1e-12 {
		t.Errorf("chance %v, per-type %v", rows[0].Chance, rows[0].TypeUnchanged)
	}
	md := Markdown(rows)
	for _, want := range []string{"authorship attacker accuracy (lower = more private)", "| 66.7% |", "Chance level (always the evaluated split's most frequent class): 0.6000."} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
}

// TestTableIntervals: mean, sd, the 95% interval by Student's t, the
// paired difference to each seed's baseline, rows in the config's order
// with ε numeric, ε empty for the baseline, the LaTeX table and the long
// per-seed table.
func TestTableIntervals(t *testing.T) {
	var recs []Record
	for i, acc := range [][2]float64{{0.80, 0.70}, {0.82, 0.74}, {0.84, 0.75}} {
		seed := uint64(i + 1)
		recs = append(recs, rec("none", 0, seed, acc[0], "ok"), rec("test", 10, seed, acc[1], "ok"), rec("test", 2, seed, acc[1]-0.1, "ok"))
		v := rec("test", 10, seed, 0.5, "ok")
		v.Key, v.Cell.Mechanism, v.Cell.Params = v.Key+"-v", "vickrey", map[string]any{"t": 0.5}
		recs = append(recs, v)
	}
	opt := TableOptions{MaxOOV: metrics.DefaultMaxOOV, Order: []string{"vickrey t=0.5", "laplace"}}
	rows := Table(recs, opt)
	var order []string
	for _, r := range rows {
		order = append(order, fmt.Sprintf("%s %s %v", r.Setting, r.Mode, r.Epsilon))
	}
	if got := strings.Join(order, ", "); got != "none none 0, vickrey t=0.5 test 10, laplace test 2, laplace test 10" {
		t.Errorf("row order: %s", got)
	}
	r := rows[3]
	near := func(a, b float64) bool { return math.Abs(a-b) < 5e-6 }
	// accuracy 0.70, 0.74, 0.75: mean 0.73, sd 0.026458, t(0.975, 2) = 4.302653;
	// differences −0.10, −0.08, −0.09: mean −0.09, sd 0.01.
	if !near(r.Accuracy, 0.73) || !near(r.AccSD, 0.0264575) || !near(r.AccCI, 4.302653*0.0264575/math.Sqrt(3)) ||
		!near(r.Diff, -0.09) || !near(r.DiffCI, 4.302653*0.01/math.Sqrt(3)) || r.DiffSeeds != 3 {
		t.Errorf("laplace ε=10: %+v", r)
	}
	if !math.IsNaN(rows[0].Diff) {
		t.Errorf("baseline's difference to itself: %v", rows[0].Diff)
	}
	var sum strings.Builder
	WriteCSV(&sum, rows)
	if lines := strings.Split(sum.String(), "\n"); !strings.HasPrefix(lines[1], "none,none,,3,") || !strings.HasPrefix(lines[2], "vickrey t=0.5,test,10,3,") {
		t.Errorf("summary csv:\n%s", sum.String())
	}
	if tex := LaTeX(rows); !strings.Contains(tex, "\\toprule") || !strings.Contains(tex, "laplace & test & 10 & 0.730 $\\pm$ 0.066 & -0.090 $\\pm$ 0.025 &") {
		t.Errorf("latex:\n%s", tex)
	}
	var cells strings.Builder
	if err := WriteCells(&cells, recs, opt); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(cells.String()), "\n")
	if len(lines) != 13 || !strings.HasPrefix(lines[0], "setting,mechanism,param_t,notion,mode,epsilon,seed,status,accuracy,macro_f1,accuracy_minus_baseline,") ||
		!strings.HasPrefix(lines[1], "none,,,,none,,1,ok,0.8,") || !strings.HasPrefix(lines[4], "vickrey t=0.5,vickrey,0.5,metric-dp,test,10,1,ok,0.5,0.25,-0.30") {
		t.Errorf("cells csv:\n%s", cells.String())
	}
}

// TestCompare: runs side by side, a line for a setting only one run has,
// differences to the first run.
func TestCompare(t *testing.T) {
	a := Table([]Record{rec("none", 0, 1, 0.8, "ok"), rec("test", 10, 1, 0.6, "ok")}, TableOptions{})
	b := Table([]Record{rec("none", 0, 1, 0.85, "ok"), rec("none", 0, 2, 0.87, "ok"), rec("test", 5, 1, 0.5, "ok")}, TableOptions{})
	got := CompareGrid([]string{"A", "B"}, [][]Row{a, b}).Markdown()
	// Two copies of one run differ by nothing.
	if same := CompareGrid([]string{"A", "A"}, [][]Row{b, b}).Markdown(); !strings.Contains(same, "| +0.0000 |") || strings.Contains(same, "paired") {
		t.Errorf("a run beside itself:\n%s", same)
	}
	for _, want := range []string{
		"| mechanism | mode | ε | A: accuracy (seeds) | B: accuracy (seeds) | B − A |",
		// Paired on seed 1, the one both have (the means' difference,
		// +0.0600, counted seed 2's 0.87 against nothing).
		"| none | none | — | 0.8000 (1) | 0.8600 [0.7329, 0.9871] (2) | +0.0500 (1 seed paired) |",
		"| laplace | test | 10 | 0.6000 (1) | — | — |",
		"| laplace | test | 5 | — | 0.5000 (1) | — |",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("no line %q in\n%s", want, got)
		}
	}
}

// TestSplice: generated blocks are replaced by their run's table, the
// rest of the document is untouched, a failing block is kept and
// reported.
func TestSplice(t *testing.T) {
	doc := "# Title\n\ntext\n<!-- xp:results runs/a -->\nold table\n<!-- /xp:results -->\nmore\n<!-- xp:results runs/missing -->\nkept\n<!-- /xp:results -->\n"
	got, n, problems := Splice([]byte(doc), map[string]func(string) (string, error){"results": func(run string) (string, error) {
		if run == "runs/a" {
			return "| new |\n", nil
		}
		return "", os.ErrNotExist
	}})
	want := "# Title\n\ntext\n<!-- xp:results runs/a -->\n| new |\n<!-- /xp:results -->\nmore\n<!-- xp:results runs/missing -->\nkept\n<!-- /xp:results -->\n"
	if string(got) != want || n != 2 || len(problems) != 1 {
		t.Errorf("got %q (%d blocks, problems %v)\nwant %q", got, n, problems, want)
	}
}

// TestMarkdownEscapes: a cell or note holding HTML — a word list's
// "<script>" — is written as text, not markup; pipes and line breaks stay
// inside their cell.
func TestMarkdownEscapes(t *testing.T) {
	g := Grid{Header: []string{"word", "n"}, Rows: [][]string{{"<script>alert(1)</script>", "a|b\nc"}}, Notes: []string{"note <b>bold</b> & more"}}
	md := g.Markdown()
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", `a\|b c`, "note &lt;b&gt;bold&lt;/b&gt; &amp; more"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	if strings.Contains(md, "<script>") || strings.Contains(md, "<b>") {
		t.Errorf("raw HTML in\n%s", md)
	}
}

// TestLong: the long table has one row per record and statistic — a
// utility cell's accuracy and its difference to its seed's baseline, an
// analysis's statistics with their recorded intervals — and a row for a
// failed record.
func TestLong(t *testing.T) {
	base := rec("none", 0, 1, 0.8, "ok")
	cell := rec("test", 10, 1, 0.7, "ok")
	cell.Test.N = 10 // the test set's Wilson interval: [0.3968, 0.8922]
	failed := rec("test", 10, 2, 0, "failed")
	a := &metrics.Analysis{}
	a.AddCI("E_M", 0.5, 0.4, 0.6)
	a.Add("prior words", 300)
	a.Flag("copied")
	an := Record{Key: "k", Cell: experiments.Cell{Analysis: "bayes-adversary", Mechanism: "laplace", Epsilon: 5, Seed: 3}, Status: "ok", Analysis: a}
	var b strings.Builder
	// A utility cell a stage ran at an ε of its finding says which.
	if err := WriteLong(&b, []Record{base, cell, failed, an}, map[string]string{"test-10-1": "matched-privacy"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"kind,setting,mechanism,mode,epsilon,seed,statistic,value,lo,hi,status,flags,key,stage,model\n",
		"utility,laplace,laplace,test,10,1,accuracy,0.7,0.39677814746114526,0.892208732593699,ok,,test-10-1,matched-privacy,\n",
		"utility,laplace,laplace,test,10,1,Δ accuracy,-0.10000000000000009,,,ok,,test-10-1,matched-privacy,\n",
		"utility,laplace,laplace,test,10,2,,,,,failed,,test-10-2,,\n",
		"bayes-adversary,laplace,laplace,,5,3,E_M,0.5,0.4,0.6,ok,copied,k,,\n",
		"bayes-adversary,laplace,laplace,,5,3,prior words,300,,,ok,copied,k,,\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestAnalysisFlags: a flag a seed's record raised shows in the analysis
// table's flags column, with how many seeds raised it where not all did;
// a table without flags has no such column.
func TestAnalysisFlags(t *testing.T) {
	rec := func(seed uint64, flags ...string) Record {
		a := &metrics.Analysis{Method: "sampled"}
		a.Add("recovery %", 10)
		for _, f := range flags {
			a.Flag(f)
		}
		return Record{Cell: experiments.Cell{Analysis: "reconstruction", Mechanism: "tem", Epsilon: 5, Seed: seed}, Status: "ok", Analysis: a}
	}
	rows := AnalysisTable([]Record{rec(1, "no better than copying"), rec(2, "no better than copying", "target not reached"), rec(3, "no better than copying")}, nil)
	md := AnalysisMarkdown(rows)
	if !strings.Contains(md, "| flags |") || !strings.Contains(md, "no better than copying; target not reached (1 of 3 seeds)") {
		t.Errorf("flags not in the table:\n%s", md)
	}
	if md := AnalysisMarkdown(AnalysisTable([]Record{rec(1)}, nil)); strings.Contains(md, "flags") {
		t.Errorf("a flags column without flags:\n%s", md)
	}
}

// TestHolmOverTable: the baseline column's p-values are adjusted over the
// table's lines, each line's raw p kept beside.
func TestHolmOverTable(t *testing.T) {
	rec := func(mode string, eps float64, correct string) Record {
		c := experiments.Cell{Mechanism: "laplace", Epsilon: eps, Mode: mode, Seed: 1}
		if mode == "none" {
			c = experiments.Cell{Mode: "none", Seed: 1}
		}
		return Record{Key: fmt.Sprint(mode, eps), Cell: c, Status: "ok", Test: metrics.Classification{N: len(correct), Accuracy: share(correct), Correct: correct}}
	}
	all := strings.Repeat("1", 20)
	rows := Table([]Record{rec("none", 0, all), rec("test", 1, strings.Repeat("0", 12)+strings.Repeat("1", 8)), rec("test", 10, "0"+strings.Repeat("1", 19))}, TableOptions{})
	var ps, holm []float64
	for _, r := range rows[1:] {
		ps, holm = append(ps, r.VsBaseline.P), append(holm, r.PHolm)
	}
	if want := stats.Holm(ps); len(ps) != 2 || math.Abs(ps[0]-stats.McNemar(0, 12)) > 1e-15 || ps[1] != 1 || holm[0] != want[0] || holm[1] != want[1] || holm[0] != 2*ps[0] {
		t.Errorf("raw %v, Holm %v", ps, holm)
	}
	md := Markdown(rows)
	if !strings.Contains(md, "p vs baseline (Holm)") || !strings.Contains(md, fmt.Sprintf("%.2g (12)", 2*ps[0])) {
		t.Errorf("Markdown:\n%s", md)
	}
}

func share(correct string) float64 {
	return float64(strings.Count(correct, "1")) / float64(len(correct))
}

// TestKeptStopwords: tokens a stopword rule kept (1-Diffractor, CusText+)
// count as unchanged — one definition, the share of the tokens with a
// vector returned as they were — with the kept part beside it in its own
// column of the Markdown and LaTeX tables and in long.csv, and a flag on
// the row; a table whose mechanisms keep nothing by rule has no such
// column.
func TestKeptStopwords(t *testing.T) {
	cell := rec("test", 0.1, 1, 0.6, "ok")
	cell.Privacy = map[string]metrics.Privatization{"test": {Tokens: 100, OOV: 10, Stopwords: 36, Unchanged: 3, Epsilon: 0.1}}
	rows := Table([]Record{rec("none", 0, 1, 0.8, "ok"), cell}, TableOptions{MaxOOV: metrics.DefaultMaxOOV})
	r := rows[1]
	if math.Abs(r.Unchanged-39.0/90) > 1e-12 || math.Abs(r.Stopwords-36.0/90) > 1e-12 {
		t.Errorf("unchanged %v, kept %v; want 39/90 and 36/90", r.Unchanged, r.Stopwords)
	}
	if !slices.Contains(r.Flags, "test 40% kept unguarded") {
		t.Errorf("flags %q", r.Flags)
	}
	md := Markdown(rows)
	for _, want := range []string{"| unchanged (in-vocab) | unchanged per word type | OOV | of which kept unguarded |", "| 43.3% | — | 10.0% | 40.0% |", "with no privacy guarantee"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	if tex := LaTeX(rows); !strings.Contains(tex, "Unchanged & Kept unguarded") || !strings.Contains(tex, "43.3\\% & 40.0\\%") {
		t.Errorf("LaTeX:\n%s", tex)
	}
	var b strings.Builder
	if err := WriteLong(&b, []Record{cell}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ",kept_unguarded,0.4,") {
		t.Errorf("long.csv:\n%s", b.String())
	}
	for _, plain := range []string{Markdown(Table([]Record{rec("none", 0, 1, 0.8, "ok"), rec("test", 10, 1, 0.7, "ok")}, TableOptions{})), LaTeX(rows[:1])} {
		if strings.Contains(plain, "kept unguarded") || strings.Contains(plain, "Kept unguarded") {
			t.Errorf("a kept column where nothing was kept by rule:\n%s", plain)
		}
	}
}

// TestAnalysisCSV: analysis.csv has one ε column — a found ε (the matched
// stage's, a selection's) in it with its spread, not 0 there and the
// value in a second column — snake_case statistics with sd and
// half-width empty under two seeds, and the rows' flags last.
func TestAnalysisCSV(t *testing.T) {
	rows := []StatRow{
		{Analysis: "bayes-adversary", Setting: "laplace", Epsilon: 10, Seeds: 1, Names: []string{"E_M held-out"}, Mean: []float64{0.98}, SD: []float64{0}, CI: []float64{0}},
		{Analysis: "matched", Setting: "laplace", Seeds: 3, Names: []string{"ε", "accuracy"}, Mean: []float64{3.5, 0.8}, SD: []float64{0.5, 0.01}, CI: []float64{1.2, 0.02},
			Flags: []string{"no attacker beats copying"}},
	}
	dir := t.TempDir()
	if _, err := WriteAnalysisTables(dir, rows); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "tables", "analysis.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := "analysis,setting,notion,epsilon,epsilon_sd,epsilon_ci95,seeds,failed,e_m_held_out,e_m_held_out_sd,e_m_held_out_ci95,accuracy,accuracy_sd,accuracy_ci95,flags\n" +
		"bayes-adversary,laplace,,10,,,1,0,0.98,,,,,,\n" +
		"matched,laplace,,3.5,0.5,1.2,3,0,,,,0.8,0.01,0.02,no attacker beats copying\n"
	if string(b) != want {
		t.Errorf("analysis.csv:\n%s\nwant:\n%s", b, want)
	}
	// Every table xp writes has its LaTeX: analysis.tex, one tabular a
	// table, ε and ± as math, hostile text escaped.
	rows[1].Setting = "laplace_{x} & 50%"
	if _, err := WriteAnalysisTables(dir, rows); err != nil {
		t.Fatal(err)
	}
	tex, err := os.ReadFile(filepath.Join(dir, "tables", "analysis.tex"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\\begin{tabular}{llrr", "% bayes-adversary", "% matched", "$\\varepsilon$", "laplace\\_\\{x\\} \\& 50\\%", "3.5 $\\pm$ 0.5", "\\bottomrule"} {
		if !strings.Contains(string(tex), want) {
			t.Errorf("analysis.tex lacks %q:\n%s", want, tex)
		}
	}
	if n := strings.Count(string(tex), "\\begin{tabular}"); n != 2 {
		t.Errorf("%d tabulars, want one per table:\n%s", n, tex)
	}
}

// TestHonestEM: where f_M was sampled the tables lead with the held-out
// E_M under the name E_M, the plug-in beside it labelled biased low, and
// recovery from the held-out estimate; an exact E_M stays as recorded;
// the rows the claims read are left alone; long.csv names the plug-in
// the same way.
func TestHonestEM(t *testing.T) {
	sampled := StatRow{Analysis: "bayes-adversary", Setting: "laplace", Epsilon: 10, Seeds: 1,
		Names: []string{"E_M", "E_M held-out", "recovery"}, Mean: []float64{0.39, 0.99, 0.61}, SD: []float64{0, 0, 0}, CI: []float64{math.NaN(), math.NaN(), math.NaN()},
		Interval: map[string][2]float64{"E_M": {0.386, 0.394}}}
	exact := StatRow{Analysis: "bayes-adversary", Setting: "vickrey", Epsilon: 10, Seeds: 1,
		Names: []string{"E_M", "recovery"}, Mean: []float64{0.5, 0.5}, SD: []float64{0, 0}, CI: []float64{math.NaN(), math.NaN()}}
	rows := []StatRow{sampled, exact}
	h := Honest(rows)
	if got := h[0]; !slices.Equal(got.Names, []string{"E_M", PlugIn, "recovery"}) || got.Mean[0] != 0.99 || got.Mean[1] != 0.39 || math.Abs(got.Mean[2]-0.01) > 1e-12 ||
		got.Interval[PlugIn] != [2]float64{0.386, 0.394} || len(got.Interval) != 1 {
		t.Errorf("sampled row shown as %+v", got)
	}
	if !reflect.DeepEqual(h[1], exact) {
		t.Errorf("exact row changed: %+v", h[1])
	}
	if rows[0].Names[0] != "E_M" || rows[0].Mean[0] != 0.39 || rows[0].Interval["E_M"] != [2]float64{0.386, 0.394} {
		t.Errorf("Honest modified its input: %+v", rows[0])
	}
	md := AnalysisMarkdown(rows)
	if !strings.Contains(md, "| E_M | "+PlugIn+" | recovery |") || !strings.Contains(md, "| 0.99 | 0.39 ") {
		t.Errorf("analysis table:\n%s", md)
	}
	a := &metrics.Analysis{}
	a.AddCI("E_M", 0.39, 0.386, 0.394)
	a.Add("E_M held-out", 0.99)
	var b strings.Builder
	if err := WriteLong(&b, []Record{{Key: "k", Cell: experiments.Cell{Analysis: "bayes-adversary", Mechanism: "laplace", Epsilon: 10, Seed: 1}, Status: "ok", Analysis: a}}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ","+PlugIn+",0.39,0.386,0.394,") || !strings.Contains(b.String(), ",E_M held-out,0.99,") {
		t.Errorf("long.csv:\n%s", b.String())
	}
}

// TestPrivacyUnitOnlyWithMechanisms: the note on what ε protects stands
// under a table with a privatized line, not under one of baselines alone.
func TestPrivacyUnitOnlyWithMechanisms(t *testing.T) {
	if md := Markdown(Table([]Record{rec("none", 0, 1, 0.8, "ok")}, TableOptions{})); strings.Contains(md, "Privacy unit") {
		t.Errorf("privacy unit under a baseline-only table:\n%s", md)
	}
	if md := Markdown(Table([]Record{rec("none", 0, 1, 0.8, "ok"), rec("test", 10, 1, 0.7, "ok")}, TableOptions{})); !strings.Contains(md, "Privacy unit") {
		t.Errorf("no privacy unit under a privatized table:\n%s", md)
	}
}

// TestPairedGrid: the lines a user names are tested pairwise, each pair
// on the seeds both have, with Holm's adjustment over the pairs.
func TestPairedGrid(t *testing.T) {
	mk := func(mech string, eps float64, seed uint64, correct string) Record {
		c := experiments.Cell{Mechanism: mech, Epsilon: eps, Mode: "test", Seed: seed}
		if mech == "" {
			c = experiments.Cell{Mode: "none", Seed: seed}
		}
		return Record{Key: fmt.Sprint(mech, eps, seed), Cell: c, Status: "ok", Test: metrics.Classification{N: len(correct), Accuracy: share(correct), Correct: correct}}
	}
	recs := []Record{
		mk("", 0, 1, "1111111111"), mk("", 0, 2, "1111111110"),
		mk("laplace", 5, 1, "0011111111"), mk("laplace", 5, 2, "0001111111"),
		mk("tem", 5, 1, "1111111100"), mk("tem", 5, 2, "1111111111"), mk("tem", 5, 3, "0000000000"), // seed 3: no pair
	}
	rows := Table(recs, TableOptions{})
	g, err := PairedGrid(rows, []string{"laplace test 5", "tem test 5", "none"})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Rows) != 3 {
		t.Fatalf("%d comparisons:\n%s", len(g.Rows), g.Markdown())
	}
	// laplace against tem on seeds 1 and 2: k = −2, −2, −1 (examples
	// 0–2) and +1, +1 (8, 9): Σ = −3; 18 of the 32 sign flips reach |Σ| ≥ 3
	// (±2 ±2 ±1 ±1 ±1, counted by hand).
	want := stats.Paired{Seeds: 2, Examples: 10, Diff: (0 - 0.3) / 2, Discordant: 5, P: 18.0 / 32, Exact: true}
	ps, err := Pairs(rows, []string{"laplace test 5", "tem test 5"})
	if err != nil {
		t.Fatal(err)
	}
	got := ps[0].Test
	if math.Abs(got.P-want.P) > 1e-12 || got.Discordant != want.Discordant || math.Abs(got.Diff-want.Diff) > 1e-12 || got.Seeds != 2 {
		t.Errorf("laplace against tem: %+v, want %+v", got, want)
	}
	if r := g.Rows[0]; r[0] != "laplace test 5" || r[1] != "tem test 5" || r[2] != "2" || r[7] != "5" || r[8] != fmt.Sprintf("%.2g", want.P) {
		t.Errorf("first comparison: %q", r)
	}
	if _, err := PairedGrid(rows, []string{"laplace test 5", "tem tset 5"}); err == nil || !strings.Contains(err.Error(), `did you mean "tem test 5"?`) {
		t.Errorf("mistyped line: %v", err)
	}
}

// TestStageLines: the utility cells a stage ran, each seed at the ε it
// found, are one line at the mean ε with its interval, labelled by the
// stage, after the setting's planned lines.
func TestStageLines(t *testing.T) {
	mk := func(key string, eps float64, mode string, seed uint64, acc float64) Record {
		c := experiments.Cell{Mechanism: "laplace", Epsilon: eps, Mode: mode, Seed: seed}
		if mode == "none" {
			c = experiments.Cell{Mode: "none", Seed: seed}
		}
		return Record{Key: key, Cell: c, Status: "ok", Test: metrics.Classification{N: 10, Accuracy: acc}}
	}
	recs := []Record{mk("b1", 0, "none", 1, 0.9), mk("b2", 0, "none", 2, 0.8), mk("g1", 10, "both", 1, 0.7), mk("g2", 10, "both", 2, 0.6),
		mk("s1", 30, "both", 1, 0.85), mk("s2", 34, "both", 2, 0.75)}
	rows := Table(recs, TableOptions{FromStage: map[string]string{"s1": "matched-privacy", "s2": "matched-privacy"}})
	if len(rows) != 3 {
		t.Fatalf("%d lines, want the baseline, the grid's and the stage's", len(rows))
	}
	r := rows[2]
	if r.Stage != "matched-privacy" || r.Epsilon != 32 || math.Abs(r.EpsCI-12.706204736174698*2) > 1e-6 || r.Seeds != 2 || math.Abs(r.Diff-(-0.05)) > 1e-12 {
		t.Errorf("stage line %+v", r)
	}
	if got := Label(r); got != "laplace both matched-privacy" {
		t.Errorf("label %q", got)
	}
	if md := Markdown(rows); !strings.Contains(md, "| laplace | ? | both | 32 ± 25 (matched-privacy) | 2 |") {
		t.Errorf("Markdown:\n%s", md)
	}
	if tex := LaTeX(rows); !strings.Contains(tex, "32 $\\pm$ 25 (matched-privacy)") {
		t.Errorf("LaTeX:\n%s", tex)
	}
	// Without the stage's map the same records are grid lines of their own.
	if n := len(Table(recs, TableOptions{})); n != 4 {
		t.Errorf("%d lines without FromStage, want 4", n)
	}
}

// TestSharedNotes: a note several rows of an analysis carry is listed
// once, with the count of rows, not under each row.
func TestSharedNotes(t *testing.T) {
	note := "f_M sampled: draw more where the two differ"
	var rows []StatRow
	for _, eps := range []float64{1, 5, 10} {
		rows = append(rows, StatRow{Analysis: "bayes-adversary", Setting: "laplace", Epsilon: eps, Seeds: 1, Notes: []string{note}})
	}
	rows[2].Notes = append(rows[2].Notes, "its own note")
	ex := AnalysisExamples(rows)
	md := AnalysisMarkdown(rows)
	if strings.Count(md, note) != 1 || len(ex) != 2 || ex[1].Heading != "bayes-adversary, 3 rows" || !strings.Contains(md, "its own note") {
		t.Errorf("examples %+v\n%s", ex, md)
	}
}
