package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/spec"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestPlotFiles: a run's default figures are written in each format;
// a figure that cannot be written is an error, not a silent success.
func TestPlotFiles(t *testing.T) {
	rows := results.Table([]results.Record{
		rec("test", 10, 1, 0.6), rec("test", 10, 2, 0.8), rec("none", 0, 1, 0.9), rec("train", 1, 1, 0.5), rec("test", 1, 1, 0.55),
	}, results.TableOptions{})
	dir := t.TempDir()
	paths, err := Plot(dir, "t", rows, PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.Size() < 1000 {
			t.Errorf("plot %s: %v", p, err)
		}
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	if strings.Join(names, " ") != "accuracy.png accuracy.svg accuracy.pdf privacy.png privacy.svg privacy.pdf" {
		t.Errorf("plots %v", names)
	}
	// A plot that cannot be written is an error, not a silent success.
	blocked := t.TempDir()
	os.WriteFile(filepath.Join(blocked, "plots"), nil, 0o666)
	if _, err := Plot(blocked, "t", rows, PlotOptions{}); err == nil {
		t.Error("writing plots where a file blocks the folder succeeded")
	}
}

func rec(mode string, eps float64, seed uint64, acc float64) results.Record {
	c := experiments.Cell{Mode: mode, Seed: seed}
	r := results.Record{Key: fmt.Sprintf("%s-%v-%d", mode, eps, seed), Cell: c, Status: "ok", Test: metrics.Classification{Accuracy: acc, MacroF1: acc / 2}}
	if mode != "none" {
		r.Cell.Mechanism, r.Cell.Epsilon, r.Notion = "laplace", eps, spec.MetricDP
		r.Privacy = map[string]metrics.Privatization{"test": {Tokens: 100, Unchanged: 20, OOV: 5, Epsilon: eps}}
	}
	return r
}

// TestUndrawn: xp plot names the analyses it draws nothing for (it was
// silent).
func TestUndrawn(t *testing.T) {
	rows := []results.StatRow{
		{Analysis: "neighbours", Setting: "none", Seeds: 1, Names: []string{"d1 p5"}, Mean: []float64{1}, SD: make([]float64, 1)},
		{Analysis: "select", Setting: "vickrey", Seeds: 2, Names: []string{"E_M"}, Mean: []float64{0.5}, SD: []float64{0.1}},
	}
	if u := Undrawn(append(rows, results.StatRow{Analysis: "examples", Seeds: 1})); !slices.Equal(u, []string{"select", "examples"}) {
		t.Errorf("undrawn %v, want [select examples]", u)
	}
	// The reconstruction attack has its figure: recovery against ε.
	if u := Undrawn([]results.StatRow{{Analysis: "reconstruction", Seeds: 1}}); len(u) != 0 {
		t.Errorf("reconstruction undrawn")
	}
}

// TestPlotAllFailed: rows whose every seed failed are not drawn (gonum's
// log axis panicked on an empty ε range before).
func TestPlotAllFailed(t *testing.T) {
	rows := []results.Row{
		{Setting: "none", Mode: "none", Seeds: 1, Accuracy: 0.8},
		{Setting: "laplace", Mode: "test", Epsilon: 1, Failed: 2},
		{Setting: "laplace", Mode: "test", Epsilon: 100, Failed: 2},
	}
	if _, err := Plot(t.TempDir(), "t", rows, PlotOptions{}); err == nil {
		t.Error("a plot without any privatized result: no error")
	}
	rows = append(rows, results.Row{Setting: "laplace", Mode: "train", Epsilon: 1, Seeds: 1, Accuracy: 0.5}, results.Row{Setting: "laplace", Mode: "train", Epsilon: 50, Seeds: 1, Accuracy: 0.7})
	if paths, err := Plot(t.TempDir(), "t", rows, PlotOptions{}); err != nil || len(paths) != 6 {
		t.Errorf("plot: %v %v", paths, err)
	}
}

// TestPlotPanels: the panels of a figure share one y range, ε ticks sit
// at the ε values run, settings of different privacy notions are marked
// in the legend and the axis says so, and options choose the figure and
// its files.
func TestPlotPanels(t *testing.T) {
	rows := []results.Row{
		{Setting: "none", Mode: "none", Seeds: 3, Accuracy: 0.8, AccSD: 0.01},
		{Setting: "laplace", Notion: spec.MetricDP, Mode: "train", Epsilon: 1, Seeds: 3, Accuracy: 0.5, AccSD: 0.02, Unchanged: 0.1},
		{Setting: "laplace", Notion: spec.MetricDP, Mode: "train", Epsilon: 30, Seeds: 3, Accuracy: 0.6, AccSD: 0.02, Unchanged: 0.5},
		{Setting: "santext", Notion: spec.SetDP, Mode: "test", Epsilon: 2, Seeds: 3, Accuracy: 0.7, AccSD: 0.02, Unchanged: 0.2},
		{Setting: "santext", Notion: spec.SetDP, Mode: "test", Epsilon: 3, Seeds: 3, Accuracy: 0.75, AccSD: 0.02, Unchanged: 0.3},
		{Setting: "laplace", Notion: spec.MetricDP, Mode: "test", Epsilon: 3, Seeds: 3, Accuracy: 0.79, AccSD: 0.02, Unchanged: 0.9},
	}
	opt, _ := PlotOptions{}.withDefaults()
	acc := figureSpec{ylabel: "accuracy", series: []quantity{{"", func(r results.Row) quantityAt { return quantityAt{r.Accuracy, r.AccSD, r.AccCI} }, nil}}, base: quantityAt{0.8, 0.01, math.NaN()}, chance: quantityAt{math.NaN(), 0, math.NaN()}}
	train, err := panel("t", "train", rows, acc, opt, new(marks))
	if err != nil {
		t.Fatal(err)
	}
	test, err := panel("t", "test", rows, acc, opt, new(marks))
	if err != nil {
		t.Fatal(err)
	}
	if train.Y.Min == test.Y.Min && train.Y.Max == test.Y.Max {
		t.Fatal("the panels' own ranges are equal: the test says nothing")
	}
	shareY([]*plot.Plot{train, test}, false)
	if train.Y.Min != test.Y.Min || train.Y.Max != test.Y.Max || train.Y.Min > 0.48 || train.Y.Max < 0.81 {
		t.Errorf("y ranges [%v, %v] and [%v, %v], want one covering 0.48–0.81", train.Y.Min, train.Y.Max, test.Y.Min, test.Y.Max)
	}
	var ticks []string
	for _, tk := range train.X.Tick.Marker.Ticks(train.X.Min, train.X.Max) {
		ticks = append(ticks, tk.Label)
	}
	if strings.Join(ticks, " ") != "1 30" || train.X.Scale == nil {
		t.Errorf("train ticks %v (want the ε run: 1 30)", ticks)
	}
	if !strings.Contains(test.X.Label.Text, "not comparable") || strings.Contains(train.X.Label.Text, "not comparable") {
		t.Errorf("axis labels: train %q, test %q", train.X.Label.Text, test.X.Label.Text)
	}
	dir := t.TempDir()
	paths, err := Plot(dir, "t", rows, PlotOptions{Metric: "accuracy", X: "unchanged", Formats: []string{"pdf"}, Out: filepath.Join(dir, "fig")})
	if err != nil || len(paths) != 1 || paths[0] != filepath.Join(dir, "fig", "accuracy-vs-unchanged.pdf") {
		t.Fatalf("frontier: %v %v", paths, err)
	}
	if b, _ := os.ReadFile(paths[0]); !strings.HasPrefix(string(b), "%PDF") {
		t.Error("not a PDF")
	}
	if _, err := Plot(dir, "t", rows, PlotOptions{Metric: "loss"}); err == nil {
		t.Error("an unknown metric drew")
	}
	// Against the opt-in measures: refused where no cell has them, drawn
	// with the measure's label where they do.
	for i := range rows {
		rows[i].Recovery = math.NaN()
	}
	if _, err := Plot(dir, "t", rows, PlotOptions{Metric: "accuracy", X: "recovery", Formats: []string{"pdf"}}); err == nil || !strings.Contains(err.Error(), "add privacy:") {
		t.Errorf("a frontier against an unmeasured statistic: %v", err)
	}
	for i := 1; i < len(rows); i++ {
		rows[i].Recovery = rows[i].Unchanged / 2
	}
	ropt, _ := PlotOptions{X: "recovery"}.withDefaults()
	if rp, err := panel("t", "train", rows, acc, ropt, new(marks)); err != nil || !strings.Contains(rp.X.Label.Text, "token recovery") || rp.X.Max > 0.26 {
		t.Errorf("recovery axis: %v, label %q, max %v", err, rp.X.Label.Text, rp.X.Max)
	}
	// Macro-F1 has no chance level (it drew one at 0, stretching the axis).
	rows[0].MacroF1, rows[0].MacroF1SD = 0.79, 0.01
	for i := 1; i < len(rows); i++ {
		rows[i].MacroF1 = rows[i].Accuracy
	}
	f1opt, _ := PlotOptions{Metric: "macro-f1"}.withDefaults()
	_, figs, err := figuresFor(rows, f1opt)
	if err != nil || len(figs) != 1 || !math.IsNaN(figs[0].chance.mean) || figs[0].base.mean != 0.79 {
		t.Fatalf("macro-F1 figure: %v %+v", err, figs)
	}
	f1panel, err := panel("t", "train", rows, figs[0], f1opt, new(marks))
	if err != nil || f1panel.Y.Min < 0.4 {
		t.Errorf("macro-F1 panel's y axis starts at %v: a reference at 0 was drawn (%v)", f1panel.Y.Min, err)
	}
}

// TestHistograms: plausible deniability's per-word N_w and S_w, pooled
// over seeds, are drawn as histograms (Feyisetan Fig. 2), one panel per ε
// on one x range; the bins count every word, the largest in the last bin.
func TestHistograms(t *testing.T) {
	bins := histogramOf([]float64{0, 0.5, 5, 9.99, 10, 10}, 0, 10, 5)
	var weights []float64
	for _, b := range bins {
		weights = append(weights, b.Weight)
	}
	if !slices.Equal(weights, []float64{2, 0, 1, 0, 3}) || bins[4].Max != 10 {
		t.Errorf("bins %v", bins)
	}
	rows := results.AnalysisTable(histogramRecords(), nil)
	dir := t.TempDir()
	paths, err := PlotAnalysis(dir, "t", rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"plausible-deniability-N_w-hist.pdf", "plausible-deniability-S_w-hist.png"} {
		if !slices.Contains(paths, filepath.Join(dir, "plots", want)) {
			t.Errorf("no %s in %v", want, paths)
		}
	}
}

// TestDiffractorNotion: 1-Diffractor's ε (a distance along its line of
// words) is its own notion, so a panel that sets it beside Laplace's on
// one ε axis says the two are not comparable (both were metric-dp).
func TestDiffractorNotion(t *testing.T) {
	d, err := spec.Lookup(spec.Mechanism, "diffractor")
	if err != nil {
		t.Fatal(err)
	}
	if d.Notion == spec.MetricDP {
		t.Fatalf("diffractor's notion is %s, Laplace's too", d.Notion)
	}
	rows := []results.Row{
		{Setting: "laplace", Notion: spec.MetricDP, Mode: "test", Epsilon: 1, Seeds: 3, Accuracy: 0.5},
		{Setting: "diffractor", Notion: d.Notion, Mode: "test", Epsilon: 1, Seeds: 3, Accuracy: 0.6},
	}
	opt, _ := PlotOptions{}.withDefaults()
	acc := figureSpec{ylabel: "accuracy", series: []quantity{{"", func(r results.Row) quantityAt { return quantityAt{r.Accuracy, r.AccSD, r.AccCI} }, nil}}, base: quantityAt{math.NaN(), 0, math.NaN()}, chance: quantityAt{math.NaN(), 0, math.NaN()}}
	p, err := panel("t", "test", rows, acc, opt, new(marks))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.X.Label.Text, "not comparable") {
		t.Errorf("Laplace beside 1-Diffractor: axis %q", p.X.Label.Text)
	}
}

func histogramRecords() []results.Record {
	var recs []results.Record
	for _, eps := range []float64{1, 5} {
		for seed := uint64(1); seed <= 2; seed++ {
			a := &metrics.Analysis{Series: map[string][]metrics.Num{"N_w": {0, 1, metrics.Num(eps * 10)}, "S_w": {100, 90, 80}}}
			a.Add("N_w mean", eps)
			recs = append(recs, results.Record{Cell: experiments.Cell{Analysis: "plausible-deniability", Mechanism: "laplace", Epsilon: eps, Seed: seed}, Status: "ok", Analysis: a})
		}
	}
	return recs
}

// TestFigureText: drawn at a narrow width with many ε and two notions,
// every figure's text stays inside its panel — the x label (it ran off
// the image's left edge) wrapped within the panel, the ε tick labels
// apart (25 and 50 printed "2550") and inside the image — and the
// privacy figure draws each share in the docs' style whatever the
// setting (a second setting's unchanged share was dashed like OOV).
func TestFigureText(t *testing.T) {
	var rows []results.Row
	for _, mode := range []string{"train", "test"} {
		for _, e := range []float64{1, 2, 5, 10, 25, 50, 100} {
			rows = append(rows, results.Row{Setting: "laplace", Notion: spec.MetricDP, Mode: mode, Epsilon: e, Seeds: 3, Accuracy: 0.5 + e/400, AccSD: 0.01, Unchanged: e / 100, OOV: 0.01, TypeUnchanged: e / 110},
				results.Row{Setting: "diffractor", Notion: spec.LineDP, Mode: mode, Epsilon: e, Seeds: 3, Accuracy: 0.55 + e/500, AccSD: 0.01, Unchanged: e / 120, OOV: 0.02, TypeUnchanged: e / 130})
		}
	}
	rows = append(rows, results.Row{Setting: "none", Mode: "none", Seeds: 3, Accuracy: 0.8, AccSD: 0.01})
	figs, err := UtilityFigures("sst2-mine", rows, PlotOptions{Width: 2.2 * vg.Inch, Height: 2 * vg.Inch})
	if err != nil {
		t.Fatal(err)
	}
	wrapped := false
	for _, f := range figs {
		wrapped = checkText(t, f) || wrapped
		if f.Name != "privacy" {
			continue
		}
		for _, e := range f.marks.legend {
			line, ok := e.thumbs[0].(*plotter.Line)
			if !ok {
				continue
			}
			switch {
			case strings.HasSuffix(e.label, "unchanged (in-vocab)") && line.Dashes != nil:
				t.Errorf("privacy: %q dashed %v; the docs draw the unchanged share solid", e.label, line.Dashes)
			case strings.HasSuffix(e.label, "OOV") && len(line.Dashes) == 0:
				t.Errorf("privacy: %q solid; the docs draw OOV dashed", e.label)
			}
		}
	}
	if !wrapped {
		t.Error("no x label needed wrapping: the test says nothing")
	}
}

// checkText lays f out and checks its text against its panels: each x
// label line within its panel, the x tick labels apart and inside the
// image, at least three labelled; it reports whether a label wrapped.
func checkText(t *testing.T, f Figure) (wrapped bool) {
	t.Helper()
	w, h := f.size()
	c := draw.New(vgimg.New(w, h))
	panels, _ := f.layout(c)
	for i, p := range f.Panels {
		area := panels[i]
		for _, line := range strings.Split(p.X.Label.Text, "\n") {
			if lw := p.X.Label.TextStyle.Width(line); lw > area.Max.X-area.Min.X {
				t.Errorf("%s panel %d: x label line %q is %.0f wide, the panel %.0f", f.Name, i, line, lw, area.Max.X-area.Min.X)
			}
		}
		wrapped = wrapped || strings.Contains(p.X.Label.Text, "\n")
		dc := p.DataCanvas(area)
		if dw := dc.Max.X - dc.Min.X; dw < (area.Max.X-area.Min.X)/2 {
			t.Errorf("%s panel %d: the data area is %.0f of the panel's %.0f", f.Name, i, dw, area.Max.X-area.Min.X)
		}
		var prevEnd vg.Length = -1
		labelled := 0
		for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
			if tk.Label == "" {
				continue
			}
			labelled++
			x, half := dc.X(p.X.Norm(tk.Value)), p.X.Tick.Label.Width(tk.Label)/2
			if x-half < prevEnd {
				t.Errorf("%s panel %d: tick label %q overlaps the one before it", f.Name, i, tk.Label)
			}
			if x-half < 0 || x+half > w {
				t.Errorf("%s panel %d: tick label %q outside the image", f.Name, i, tk.Label)
			}
			prevEnd = x + half
		}
		if labelled < 3 {
			t.Errorf("%s panel %d: %d x ticks labelled", f.Name, i, labelled)
		}
	}
	return wrapped
}

// TestAnalysisFigureText: the analysis figures over a log ε range keep
// their data area and text in place (gonum's LogScale squeezed them), say
// when the notions in them differ, name 1-Diffractor's in the legend, say
// what their bars are, and print a histogram's counts as integers.
func TestAnalysisFigureText(t *testing.T) {
	var recs []results.Record
	for _, m := range []struct {
		name   string
		notion spec.Notion
	}{{"laplace", spec.MetricDP}, {"diffractor", spec.LineDP}} {
		for _, eps := range []float64{1, 2, 5, 10, 25, 50, 100} {
			for seed := uint64(1); seed <= 2; seed++ {
				a := &metrics.Analysis{Series: map[string][]metrics.Num{"N_w": {0, 1, metrics.Num(eps * 10)}, "S_w": {100, 90, 80}}}
				a.Add("N_w mean", eps+float64(seed))
				a.Add("S_w mean", 100-eps)
				recs = append(recs, results.Record{Cell: experiments.Cell{Analysis: "plausible-deniability", Mechanism: m.name, Epsilon: eps, Seed: seed}, Notion: m.notion, Status: "ok", Analysis: a})
			}
		}
	}
	figs, err := AnalysisFigures("t", results.AnalysisTable(recs, nil))
	if err != nil {
		t.Fatal(err)
	}
	var main *Figure
	for i := range figs {
		if figs[i].Name == "plausible-deniability" {
			main = &figs[i]
		}
	}
	if main == nil {
		t.Fatalf("no plausible-deniability figure among %d", len(figs))
	}
	checkText(t, *main)
	p := main.Panels[0]
	if !strings.Contains(p.X.Label.Text, "not comparable") || !strings.Contains(p.Y.Label.Text, "± sd over seeds") {
		t.Errorf("axes %q, %q", p.X.Label.Text, p.Y.Label.Text)
	}
	if !slices.ContainsFunc(main.marks.legend, func(e legendEntry) bool { return strings.Contains(e.label, "diffractor [metric-dp-line]") }) {
		t.Errorf("legend %v", main.marks.legend)
	}
	for _, f := range figs {
		if !strings.Contains(f.Name, "-hist") {
			continue
		}
		for _, hi := range []float64{3, 7, 250} {
			for _, tk := range f.Panels[0].Y.Tick.Marker.Ticks(0, hi) {
				if strings.Contains(tk.Label, ".") {
					t.Errorf("%s: count tick %q over [0, %g]", f.Name, tk.Label, hi)
				}
			}
		}
	}
}
