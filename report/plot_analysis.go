package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/table"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// drawn reports whether PlotAnalysis draws a figure for analysis a: the
// neighbour percentiles, statistics versus ε, or trade-offs.
func drawn(a string) bool {
	d := spec.Drawing(a)
	return d.ByRank || len(d.Figures) > 0 || len(d.Tradeoffs) > 0
}

// Undrawn lists the analyses of rows that PlotAnalysis draws no figure
// for (their numbers are in the tables only).
func Undrawn(rows []results.StatRow) []string {
	return slices.DeleteFunc(table.AnalysisKinds(rows), drawn)
}

// PlotAnalysis draws each analysis's figure under dir/plots (PNG, SVG and
// PDF), named after the analysis: for neighbours, distance against k with
// one line per percentile (Feyisetan Fig. 1); otherwise the analysis's
// statistics against ε, one line per mechanism setting, ± sd over seeds,
// and the privacy statistic against the utility loss where both exist;
// for plausible deniability also the histograms over words of N_w and
// S_w at each ε (Feyisetan Fig. 2; see histogramFigures). It returns the
// paths written.
func PlotAnalysis(dir, title string, rows []results.StatRow) ([]string, error) {
	figs, err := AnalysisFigures(title, rows)
	if err != nil || len(figs) == 0 {
		return nil, err
	}
	pd := filepath.Join(dir, "plots")
	if err := os.MkdirAll(pd, 0o777); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var paths []string
	for _, f := range figs {
		written, err := f.write(filepath.Join(pd, f.Name), PlotFormats)
		if err != nil {
			return nil, err
		}
		paths = append(paths, written...)
	}
	return paths, nil
}

// analysisWidth is the width of an analysis figure's panel.
const analysisWidth = 4 * vg.Inch

// AnalysisFigures are the figures PlotAnalysis draws of rows (see
// PlotAnalysis), not yet written: the report page inlines them as SVG.
func AnalysisFigures(title string, rows []results.StatRow) ([]Figure, error) {
	rows = results.Honest(rows) // E_M held-out where sampled, exact otherwise
	kinds := table.AnalysisKinds(rows)
	var out []Figure
	for _, a := range kinds {
		mine := slices.DeleteFunc(slices.Clone(rows), func(r results.StatRow) bool { return r.Analysis != a || r.Seeds == 0 })
		if len(mine) == 0 || !drawn(a) {
			continue
		}
		f := Figure{Name: a, Width: analysisWidth, Height: 3.6 * vg.Inch}
		var err error
		if spec.Drawing(a).ByRank {
			f.Panels, err = neighbourPanels(title, mine, &f.marks)
		}
		for _, stat := range spec.Drawing(a).Figures {
			var p *plot.Plot
			if p, err = statPanel(title, stat, mine, &f.marks); err != nil {
				break
			}
			if p != nil {
				f.Panels = append(f.Panels, p)
			}
		}
		for _, xy := range spec.Drawing(a).Tradeoffs {
			var p *plot.Plot
			if p, err = tradeoffPanel(title, xy[0], xy[1], mine, &f.marks); err != nil {
				break
			}
			if p != nil {
				f.Panels = append(f.Panels, p)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("results: plot %s: %w", a, err)
		}
		if len(f.Panels) == 0 {
			continue
		}
		out = append(out, f)
		for _, stat := range spec.Drawing(a).Histograms {
			hs, err := histogramFigures(a+"-"+stat+"-hist", title, stat, mine)
			if err != nil {
				return nil, fmt.Errorf("results: plot %s histograms: %w", a, err)
			}
			out = append(out, hs...)
		}
	}
	return out, nil
}

// histogramBins is the number of bars of a histogram.
const histogramBins = 20

// histogramFigures draws, per setting, the distribution over words of
// the series stat at each ε, one panel per ε on one x range (0 to the
// largest value of any panel) and one y range, into base[-setting].png,
// .svg and .pdf (the setting named only when there are several). Rows
// without the series draw nothing.
func histogramFigures(base, title, stat string, rows []results.StatRow) ([]Figure, error) {
	var settings []string
	hi := 0.0
	for _, r := range rows {
		if xs := r.Series[stat]; len(xs) > 0 {
			if !slices.Contains(settings, r.Setting) {
				settings = append(settings, r.Setting)
			}
			hi = math.Max(hi, slices.Max(xs))
		}
	}
	if hi == 0 {
		hi = 1
	}
	var out []Figure
	for _, s := range settings {
		f := Figure{Width: 3 * vg.Inch, Height: 2.6 * vg.Inch}
		for _, r := range rows { // by setting, then ε
			xs := r.Series[stat]
			if r.Setting != s || len(xs) == 0 {
				continue
			}
			h := &plotter.Histogram{Bins: histogramOf(xs, 0, hi, histogramBins), Width: hi / histogramBins, FillColor: okabeIto[0]}
			h.LineStyle.Width = vg.Points(0.5)
			p := plot.New()
			p.Title.Text = fmt.Sprintf("%s ε = %s", s, strconv.FormatFloat(r.Epsilon, 'g', -1, 64))
			p.X.Label.Text = fmt.Sprintf("%s (%d words)", stat, len(xs))
			p.Y.Label.Text = "words"
			p.Add(h)
			p.X.Min, p.X.Max = 0, hi
			p.Y.Tick.Marker = plainTicks{} // word counts: 250, not 250.00
			hv := &hover{series: p.Title.Text}
			for _, bin := range h.Bins {
				hv.add((bin.Min+bin.Max)/2, bin.Weight, fmt.Sprintf("%s: %s in [%s, %s): %g words", p.Title.Text, stat, results.Num(bin.Min), results.Num(bin.Max), bin.Weight))
			}
			p.Add(hv)
			f.marks.hovers = append(f.marks.hovers, hv)
			f.Panels = append(f.Panels, p)
		}
		shareY(f.Panels, false)
		f.Name = base
		if len(settings) > 1 {
			f.Name += "-" + slug(s)
		}
		out = append(out, f)
	}
	return out, nil
}

// histogramOf counts xs in n equal bins over [lo, hi] (the last bin
// includes hi; values outside are clamped into the end bins).
func histogramOf(xs []float64, lo, hi float64, n int) []plotter.HistogramBin {
	bins := make([]plotter.HistogramBin, n)
	w := (hi - lo) / float64(n)
	for i := range bins {
		bins[i].Min, bins[i].Max = lo+float64(i)*w, lo+float64(i+1)*w
	}
	for _, x := range xs {
		i := int((x - lo) / w)
		bins[max(0, min(n-1, i))].Weight++
	}
	return bins
}

// slug is a setting as a file name part: letters, digits, '.', '-' and
// '=' kept, others '_'.
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '=' {
			return r
		}
		return '_'
	}, s)
}

// tradeoffPanel plots y against x, one line per setting through its ε
// values in order (nil when no row has both).
func tradeoffPanel(title, x, y string, rows []results.StatRow, m *marks) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title + ": " + y + " versus " + x
	p.X.Label.Text = x
	p.Y.Label.Text = y
	var settings []string
	for _, r := range rows {
		mx, _ := r.Stat(x)
		my, _ := r.Stat(y)
		if !math.IsNaN(mx) && !math.IsNaN(my) && !slices.Contains(settings, r.Setting) {
			settings = append(settings, r.Setting)
		}
	}
	if len(settings) == 0 {
		return nil, nil
	}
	for i, s := range settings {
		var pts plotter.XYs
		var tips []string
		for _, r := range rows { // rows are sorted by setting, then ε
			mx, _ := r.Stat(x)
			my, _ := r.Stat(y)
			if r.Setting == s && !math.IsNaN(mx) && !math.IsNaN(my) && !math.IsInf(mx, 0) && !math.IsInf(my, 0) {
				pts = append(pts, plotter.XY{X: mx, Y: my})
				tips = append(tips, fmt.Sprintf("%s, ε = %s\n%s: %s\n%s: %s\nseeds: %s", s, r.EpsilonText(), x, r.StatText(x), y, r.StatText(y), r.SeedsText()))
			}
		}
		if err := addLine(p, i, s, pts, nil, tips, m); err != nil {
			return nil, err
		}
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// statPanel plots one statistic against ε per setting (nil when no row
// has it).
func statPanel(title, stat string, rows []results.StatRow, m *marks) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title + ": " + stat
	p.X.Label.Text = "ε"
	p.Y.Label.Text = stat
	var settings []string
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if m, _ := r.Stat(stat); !math.IsNaN(m) {
			if !slices.Contains(settings, r.Setting) {
				settings = append(settings, r.Setting)
			}
			lo, hi = math.Min(lo, r.Epsilon), math.Max(hi, r.Epsilon)
		}
	}
	if len(settings) == 0 {
		return nil, nil
	}
	var eps []float64
	notions, several := map[string]string{}, false
	for _, r := range rows {
		if !slices.Contains(eps, r.Epsilon) && r.Epsilon > 0 {
			eps = append(eps, r.Epsilon)
		}
		if n, ok := notions[r.Setting]; !ok {
			notions[r.Setting] = string(r.Notion)
		} else if n != string(r.Notion) {
			several = true
		}
	}
	slices.Sort(eps)
	seen := map[string]bool{}
	for _, n := range notions {
		seen[n] = true
	}
	several = several || len(seen) > 1
	logX := lo > 0 && hi/lo > 10
	px := logTransform(logX)
	if logX {
		p.X.Scale = logAxis{}
	}
	p.X.Tick.Marker = epsilonTicks{values: eps, width: tickWidth(analysisWidth, p.X.Tick.Label.Font.Size), style: p.X.Tick.Label, log: logX}
	if several {
		p.X.Label.Text = "ε (not comparable across the notions in the legend)"
	}
	spread := false
	for i, s := range settings {
		var pts plotter.XYs
		var errs plotter.YErrors
		var tips []string
		for _, r := range rows {
			if m, sd := r.Stat(stat); r.Setting == s && !math.IsNaN(m) && !math.IsInf(m, 0) {
				pts = append(pts, plotter.XY{X: px(r.Epsilon), Y: m})
				errs = append(errs, struct{ Low, High float64 }{sd, sd})
				tips = append(tips, fmt.Sprintf("%s, ε = %s\n%s: %s (± sd over seeds)\nseeds: %s", s, r.EpsilonText(), stat, r.StatText(stat), r.SeedsText()))
				spread = spread || r.Seeds > 1 && sd > 0
			}
		}
		label := s
		if several && notions[s] != "" {
			label += " [" + notions[s] + "]" // 1-Diffractor's ε is a distance on its line of words
		}
		if err := addLine(p, i, label, pts, errs, tips, m); err != nil {
			return nil, err
		}
	}
	if spread {
		p.Y.Label.Text += " (bars: ± sd over seeds)"
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// logTransform maps a log axis's values to log10 (logAxis), the identity
// otherwise.
func logTransform(log bool) func(float64) float64 {
	return func(x float64) float64 {
		if log {
			return math.Log10(x)
		}
		return x
	}
}

// neighbourPanels plots the distance to the k-th neighbour against k, one
// line per percentile (statistics named "d<k> p<q>").
func neighbourPanels(title string, rows []results.StatRow, m *marks) ([]*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title + ": distance to the k-th nearest neighbour"
	p.X.Label.Text = "k"
	p.Y.Label.Text = "Euclidean distance"
	p.X.Scale = logAxis{}
	byQ := map[string]plotter.XYs{}
	var qs []string
	var ks []float64
	r := rows[0]
	for i, n := range r.Names {
		var k int
		var q string
		if _, err := fmt.Sscanf(n, "d%d p%s", &k, &q); err != nil {
			continue
		}
		if !slices.Contains(qs, q) {
			qs = append(qs, q)
		}
		byQ[q] = append(byQ[q], plotter.XY{X: math.Log10(float64(k)), Y: r.Mean[i]})
		if !slices.Contains(ks, float64(k)) {
			ks = append(ks, float64(k))
		}
	}
	slices.Sort(ks)
	p.X.Tick.Marker = epsilonTicks{values: ks, width: tickWidth(analysisWidth, p.X.Tick.Label.Font.Size), style: p.X.Tick.Label, log: true}
	for i, q := range qs {
		var tips []string
		for _, pt := range byQ[q] {
			tips = append(tips, fmt.Sprintf("percentile %s, k = %g: distance %s (%s seeds)", q, math.Round(math.Pow(10, pt.X)), results.Num(pt.Y), r.SeedsText()))
		}
		if err := addLine(p, i, "percentile "+q, byQ[q], nil, tips, m); err != nil {
			return nil, err
		}
	}
	p.Add(plotter.NewGrid())
	return []*plot.Plot{p}, nil
}

// addLine draws one line with points (and error bars when errs is given),
// and notes its points for hovering with their tips.
func addLine(p *plot.Plot, i int, label string, pts plotter.XYs, errs plotter.YErrors, tips []string, m *marks) error {
	if len(pts) == 0 {
		return nil
	}
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	c := okabeIto[i%len(okabeIto)]
	line.Color, points.Color = c, c
	line.Dashes = settingDashes[i%len(settingDashes)]
	points.Shape = plotutil.Shape(i)
	p.Add(line, points)
	if errs != nil {
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{pts, errs})
		if err != nil {
			return err
		}
		eb.Color = c
		p.Add(eb)
	}
	m.legend.add(label, line, points)
	h := &hover{series: label}
	for j, pt := range pts {
		h.add(pt.X, pt.Y, tips[j])
	}
	p.Add(h)
	m.hovers = append(m.hovers, h)
	return nil
}

// plainTicks are gonum's default ticks for a count: labelled only at
// whole numbers, printed as integers (250, not 250.00; no 0.5 word).
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		switch v := ticks[i].Value; {
		case ticks[i].Label == "":
		case v != math.Trunc(v):
			ticks[i].Label = ""
		default:
			ticks[i].Label = strconv.FormatFloat(v, 'f', 0, 64)
		}
	}
	return ticks
}
