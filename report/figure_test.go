package report

import (
	"fmt"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/spec"
)

// TestLegendOutsideData: a figure's legend sits in a strip below its
// panels, never over a panel's data area (a 12-entry legend covered half
// of each privacy panel), and every point drawn lies inside its axes —
// for the utility figures and the analysis figures alike.
func TestLegendOutsideData(t *testing.T) {
	var rows []results.Row
	rows = append(rows, results.Row{Setting: "none", Mode: "none", Seeds: 3, Accuracy: 0.8, AccSD: 0.01, Chance: 0.5})
	for i, m := range []string{"laplace", "vickrey t=0.25", "vickrey t=0.5", "santext"} {
		for _, mode := range []string{"train", "test"} {
			for _, eps := range []float64{1, 10, 100} {
				u := min(1, eps/100+float64(i)/10)
				rows = append(rows, results.Row{Setting: m, Notion: spec.MetricDP, Mode: mode, Epsilon: eps, Seeds: 3, Accuracy: 0.5 + 0.3*u, AccSD: 0.02,
					Unchanged: u, TypeUnchanged: u, OOV: 0.01})
			}
		}
	}
	figs, err := UtilityFigures("t", rows, PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var recs []results.Record
	for _, eps := range []float64{1, 10, 100} {
		for _, m := range []string{"laplace", "vickrey", "mahalanobis", "santext", "tem", "custext"} {
			a := &metrics.Analysis{}
			a.Add("E_M", 1/eps)
			a.Add("L_M flip", eps/100)
			recs = append(recs, results.Record{Cell: experiments.Cell{Analysis: "bayes-adversary", Mechanism: m, Epsilon: eps, Seed: 1}, Status: "ok", Analysis: a})
		}
	}
	more, err := AnalysisFigures("t", results.AnalysisTable(recs, nil))
	if err != nil || len(more) == 0 {
		t.Fatalf("analysis figures: %v (%d)", err, len(more))
	}
	for _, f := range append(figs, more...) {
		if len(f.marks.legend) < 3 {
			t.Fatalf("%s: %d legend entries: the test says nothing", f.Name, len(f.marks.legend))
		}
		w, h := f.size()
		c := draw.New(vgsvg.New(w, h))
		f.draw(c)
		panels, strip := f.layout(c)
		if strip.Max.Y-strip.Min.Y <= 0 {
			t.Errorf("%s: no legend strip", f.Name)
		}
		inside := func(pt vg.Point) bool {
			for i, p := range f.Panels {
				d := p.DataCanvas(panels[i])
				if pt.X >= d.Min.X && pt.X <= d.Max.X && pt.Y >= d.Min.Y && pt.Y <= d.Max.Y {
					return true
				}
			}
			return false
		}
		for i, p := range f.Panels {
			d := p.DataCanvas(panels[i])
			if d.Min.Y < strip.Max.Y {
				t.Errorf("%s: panel %d's data area reaches down to %v, into the legend's strip (top %v)", f.Name, i, d.Min.Y, strip.Max.Y)
			}
		}
		n := 0
		for _, hv := range f.marks.hovers {
			for j, at := range hv.at {
				n++
				if !inside(at) {
					t.Errorf("%s: %s's point %d at %v lies outside every panel's axes", f.Name, hv.series, j, fmt.Sprint(at))
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no point drawn", f.Name)
		}
	}
}
