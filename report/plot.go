package report

import (
	"cmp"
	"fmt"
	"image/color"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/table"
)

// PlotOptions choose what a utility figure shows and how it is written;
// the zero value gives the run's default figures.
type PlotOptions struct {
	// Metric is the utility drawn: accuracy (default) or macro-f1. Set,
	// only that figure is drawn (named after it and X).
	Metric string
	// X is the horizontal axis: epsilon (default), or a privacy
	// statistic for a privacy–utility frontier whose axis is comparable
	// across privacy notions: unchanged (the share of in-vocabulary
	// tokens left unchanged), n_w or recovery (the opt-in measures; see
	// frontierAxes).
	X string
	// Formats are the files written per figure: png, svg, pdf (default
	// all three).
	Formats []string
	// Width and Height size one panel (default 3.4 × 2.8 inches: a
	// column of a two-column paper); FontSize is the text's size in
	// points (default 9).
	Width, Height vg.Length
	FontSize      vg.Length
	// Out is the folder written (default dir/plots).
	Out string
}

// Metrics and axes PlotOptions accept.
var (
	PlotMetrics = []string{"accuracy", "macro-f1"}
	PlotAxes    = append([]string{"epsilon"}, slices.Sorted(maps.Keys(frontierAxes))...)
	PlotFormats = []string{"png", "svg", "pdf"}
)

func (o PlotOptions) withDefaults() (PlotOptions, error) {
	if o.X == "" {
		o.X = "epsilon"
	}
	if len(o.Formats) == 0 {
		o.Formats = PlotFormats
	}
	if o.Width <= 0 {
		o.Width = 3.4 * vg.Inch
	}
	if o.Height <= 0 {
		o.Height = 2.8 * vg.Inch
	}
	if o.FontSize <= 0 {
		o.FontSize = 9
	}
	switch {
	case o.Metric != "" && !slices.Contains(PlotMetrics, o.Metric):
		return o, fmt.Errorf("metric %q: want one of %v", o.Metric, PlotMetrics)
	case !slices.Contains(PlotAxes, o.X):
		return o, fmt.Errorf("x %q: want one of %v", o.X, PlotAxes)
	}
	for _, f := range o.Formats {
		if !slices.Contains(PlotFormats, f) {
			return o, fmt.Errorf("format %q: want some of %v", f, PlotFormats)
		}
	}
	return o, nil
}

// frontierAxes are the privacy statistics a utility figure can be drawn
// against instead of ε: their axis label and value.
var frontierAxes = map[string]struct {
	label string
	value func(results.Row) float64
}{
	"unchanged": {"share of in-vocabulary tokens returned unchanged (kept stopwords included)", func(r results.Row) float64 { return r.Unchanged }},
	"n_w":       {"mean N_w per draw over the split's word types", func(r results.Row) float64 { return r.Nw }},
	"recovery":  {"Bayes adversary's token recovery (1 − E_M; held-out where sampled)", func(r results.Row) float64 { return r.Recovery }},
}

// FrontierAxes are the privacy statistics of PlotAxes (beyond ε) that
// some privatized row with a result has: the frontiers rows can be drawn
// against.
func FrontierAxes(rows []results.Row) []string {
	var out []string
	for _, x := range PlotAxes[1:] {
		if slices.ContainsFunc(rows, func(r results.Row) bool {
			return r.Mode != "none" && r.Seeds > 0 && !math.IsNaN(frontierAxes[x].value(r))
		}) {
			out = append(out, x)
		}
	}
	return out
}

// Plot draws the utility figures under dir/plots (or opt.Out), each in
// every format asked, one panel per privatized mode (train-time,
// test-time, both) with one y range across panels, one line per mechanism
// setting (Okabe–Ito colours, distinct markers and dashes), the mean over
// seeds with a band of ± sd, ticks at the ε values run (a log axis when
// they span more than a decade), the unprivatized baseline as a band
// (mean ± sd) with its line, the chance level dotted. Settings of
// different privacy notions are marked in the legend and the ε axis says
// they are not comparable. By default it draws accuracy (labelled
// attacker accuracy when the label is a private attribute) and privacy
// (the share of in-vocabulary tokens left unchanged, solid, the
// per-word-type unchanged rate, dotted, and of out-of-vocabulary tokens
// passed through, dashed) versus ε. It returns the paths written.
func Plot(dir, title string, rows []results.Row, opt PlotOptions) ([]string, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("results: plot: %w", err)
	}
	figs, err := UtilityFigures(title, rows, opt)
	if err != nil {
		return nil, err
	}
	pd := cmp.Or(opt.Out, filepath.Join(dir, "plots"))
	if err := os.MkdirAll(pd, 0o777); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var paths []string
	for _, fig := range figs {
		written, err := fig.write(filepath.Join(pd, fig.Name), opt.Formats)
		if err != nil {
			return nil, err
		}
		paths = append(paths, written...)
	}
	return paths, nil
}

// UtilityFigures are the figures Plot draws of rows (see Plot), not yet
// written: the report page inlines them as SVG. A stage's lines (each
// seed at the ε it found) are in the tables and the stage's own figure,
// not on the grid's curves.
//
// A model sweep's points (results.Row.Model) each get their figures, with
// their own baseline: named "<figure>-model<i>" by the point's place in
// the sweep, the point in the title.
func UtilityFigures(title string, rows []results.Row, opt PlotOptions) ([]Figure, error) {
	rows = slices.DeleteFunc(slices.Clone(rows), func(r results.Row) bool { return r.Stage != "" })
	var points []string
	for _, r := range rows {
		if !slices.Contains(points, r.Model) {
			points = append(points, r.Model)
		}
	}
	if len(points) < 2 {
		return figuresOf(title, rows, opt)
	}
	var out []Figure
	for i, p := range points {
		mine := slices.DeleteFunc(slices.Clone(rows), func(r results.Row) bool { return r.Model != p })
		figs, err := figuresOf(title+" — model "+p, mine, opt)
		if err != nil {
			continue // every privatized line of this point failed: the others still draw
		}
		for j := range figs {
			figs[j].Name = fmt.Sprintf("%s-model%d", figs[j].Name, i+1)
		}
		out = append(out, figs...)
	}
	if len(out) == 0 {
		return figuresOf(title, rows, opt) // the error of the whole
	}
	return out, nil
}

func figuresOf(title string, rows []results.Row, opt PlotOptions) ([]Figure, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("results: plot: %w", err)
	}
	modes, figs, err := figuresFor(rows, opt)
	if err != nil {
		return nil, err
	}
	if ax, ok := frontierAxes[opt.X]; ok && !slices.ContainsFunc(rows, func(r results.Row) bool { return r.Mode != "none" && !math.IsNaN(ax.value(r)) }) {
		return nil, fmt.Errorf("results: plot against %s: no privatized cell has it (n_w and recovery are the opt-in measures: add privacy: to the config)", opt.X)
	}
	var out []Figure
	for _, fig := range figs {
		if opt.X != "epsilon" {
			if fig.shares {
				continue // unchanged against itself
			}
			fig.name += "-vs-" + opt.X
		}
		f := Figure{Name: fig.name, Width: opt.Width, Height: opt.Height}
		for _, mode := range modes {
			p, err := panel(title, mode, rows, fig, opt, &f.marks)
			if err != nil {
				return nil, fmt.Errorf("results: plot %s: %w", fig.name, err)
			}
			f.Panels = append(f.Panels, p)
		}
		shareY(f.Panels, fig.shares)
		out = append(out, f)
	}
	return out, nil
}

// figuresFor is what Plot draws of rows: the privatized modes (a panel
// each) and the figures, with the baseline's and chance's levels.
func figuresFor(rows []results.Row, opt PlotOptions) ([]string, []figureSpec, error) {
	var modes []string
	var base, chance quantityAt = quantityAt{math.NaN(), 0, math.NaN()}, quantityAt{math.NaN(), 0, math.NaN()}
	attacker := ""
	for _, r := range rows {
		if r.Seeds == 0 {
			continue // every seed failed: nothing to draw
		}
		attacker = cmp.Or(attacker, r.Attacker)
		if math.IsNaN(chance.mean) {
			chance.mean = r.Chance
		}
		if r.Mode == "none" {
			base = quantityAt{r.Accuracy, r.AccSD, math.NaN()}
			if opt.Metric == "macro-f1" {
				base = quantityAt{r.MacroF1, r.MacroF1SD, math.NaN()}
			}
		} else if !slices.Contains(modes, r.Mode) {
			modes = append(modes, r.Mode)
		}
	}
	slices.SortFunc(modes, func(a, b string) int { return results.ModeRank(a) - results.ModeRank(b) })
	if len(modes) == 0 {
		return nil, nil, fmt.Errorf("results: nothing to plot (no privatized cell succeeded)")
	}
	accLabel := "accuracy"
	if attacker != "" {
		accLabel = attacker + " attacker accuracy (lower = more private)"
	}
	acc := figureSpec{name: "accuracy", ylabel: accLabel, series: []quantity{{"", func(r results.Row) quantityAt { return quantityAt{r.Accuracy, r.AccSD, r.AccCI} }, nil}}, base: base, chance: chance}
	// The chance level is an accuracy: macro-F1 has none to draw.
	f1 := figureSpec{name: "macro-f1", ylabel: "macro-F1", series: []quantity{{"", func(r results.Row) quantityAt { return quantityAt{r.MacroF1, r.MacroF1SD, r.MacroF1CI} }, nil}}, base: base, chance: quantityAt{math.NaN(), 0, math.NaN()}}
	privacy := figureSpec{name: "privacy", ylabel: "share of tokens", shares: true, series: []quantity{
		{table.Title("unchanged"), func(r results.Row) quantityAt { return quantityAt{r.Unchanged, 0, r.UnchangedCI} }, nil},
		{"unchanged per word type", func(r results.Row) quantityAt { return quantityAt{r.TypeUnchanged, 0, math.NaN()} }, []vg.Length{vg.Points(1), vg.Points(2)}},
		{"OOV", func(r results.Row) quantityAt { return quantityAt{r.OOV, 0, math.NaN()} }, []vg.Length{vg.Points(3), vg.Points(2)}},
	}, base: quantityAt{math.NaN(), 0, math.NaN()}, chance: quantityAt{math.NaN(), 0, math.NaN()}}
	switch opt.Metric {
	case "accuracy":
		return modes, []figureSpec{acc}, nil
	case "macro-f1":
		return modes, []figureSpec{f1}, nil
	}
	return modes, []figureSpec{acc, privacy}, nil
}

// figureSpec is one figure's content: what its panels draw.
type figureSpec struct {
	name, ylabel string
	series       []quantity
	base, chance quantityAt // reference levels (NaN: none)
	shares       bool       // the y axis spans [0, 1]
}

// quantityAt is a mean over seeds, its sample sd and the half-width of
// its 95% interval (NaN: none).
type quantityAt struct{ mean, sd, ci float64 }

// quantity is one number drawn per setting: its name in the legend (""
// for the setting alone), its value and spread, its dash pattern.
type quantity struct {
	name   string
	value  func(results.Row) quantityAt
	dashes []vg.Length
}

// okabeIto is the colour-blind-safe palette of Okabe and Ito (2008),
// without its black (kept for references).
var okabeIto = []color.NRGBA{
	{0xE6, 0x9F, 0x00, 0xff}, {0x56, 0xB4, 0xE9, 0xff}, {0x00, 0x9E, 0x73, 0xff}, {0xD5, 0x5E, 0x00, 0xff},
	{0x00, 0x72, 0xB2, 0xff}, {0xCC, 0x79, 0xA7, 0xff}, {0xF0, 0xE4, 0x42, 0xff},
}

// settingDashes tell settings apart without colour (grey print, colour
// blindness): solid, dashed, dash-dot, long dashes, …
var settingDashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}, {vg.Points(9), vg.Points(3)}}

// shareY gives the panels one y range (the union of theirs), or [0, 1]
// for shares.
func shareY(panels []*plot.Plot, shares bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range panels {
		lo, hi = math.Min(lo, p.Y.Min), math.Max(hi, p.Y.Max)
	}
	if shares {
		lo, hi = 0, 1
	}
	for _, p := range panels {
		p.Y.Min, p.Y.Max = lo, hi
	}
}

// writeVia writes a file through a temporary name and renames it.
func writeVia(path string, save func(*os.File) error) error {
	f, err := xio.CreateTemp(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return fmt.Errorf("results: plot %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := save(f); err != nil {
		f.Close()
		return fmt.Errorf("results: plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("results: plot %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}

// epsilonTicks marks the ε values run, printed as written (%g), each
// value a tick; a label that would overlap the one before it on an axis
// width wide (log or linear as the panel draws it) is left off, the
// largest ε's kept in place of its neighbour's ("2550" was printed for
// 25 and 50 close together on a log axis).
type epsilonTicks struct {
	values []float64
	width  vg.Length // the data area's width, at least (see tickWidth)
	style  text.Style
	log    bool // the axis is log10 ε (logAxis)
}

func (t epsilonTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	const slack = 1e-9 // log10 of an ε at the range's end
	for _, e := range t.values {
		v := e
		if t.log {
			v = math.Log10(e)
		}
		if v >= min-slack && v <= max+slack {
			out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(e, 'g', -1, 64)})
		}
	}
	at := func(v float64) vg.Length {
		f := (v - min) / (max - min)
		if max == min || math.IsNaN(f) {
			f = 0.5
		}
		return vg.Length(f) * t.width
	}
	gap := t.style.Width(" ")
	overlaps := func(a, b plot.Tick) bool {
		return at(b.Value)-at(a.Value) < (t.style.Width(a.Label)+t.style.Width(b.Label))/2+gap
	}
	last := -1 // the last labelled tick
	for i := range out {
		if last >= 0 && overlaps(out[last], out[i]) {
			if i == len(out)-1 && last > 0 { // the largest ε keeps its label
				out[last].Label = ""
				last = i
				continue
			}
			out[i].Label = ""
			continue
		}
		last = i
	}
	return out
}

// logAxis marks an axis drawn linearly over log10 of its quantity (see
// panel).
type logAxis struct{ plot.LinearScale }

// tickWidth is a lower bound of the data area's width of a panel width
// wide: the panel less room for the y axis's label and tick labels at
// the font size given.
func tickWidth(width, fontSize vg.Length) vg.Length { return width - 8*fontSize }

// wrapLabel breaks an axis label into lines no wider than width, at
// spaces (a label wider than its panel ran off the image's edge).
func wrapLabel(style text.Style, label string, width vg.Length) string {
	if style.Width(label) <= width {
		return label
	}
	var lines []string
	line := ""
	for _, w := range strings.Fields(label) {
		if line != "" && style.Width(line+" "+w) > width {
			lines, line = append(lines, line), w
			continue
		}
		line = strings.TrimSpace(line + " " + w)
	}
	return strings.Join(append(lines, line), "\n")
}

func panel(title, mode string, rows []results.Row, fig figureSpec, opt PlotOptions, m *marks) (*plot.Plot, error) {
	p := plot.New()
	names := map[string]string{"train": "train-time", "test": "test-time", "both": "train and test"}
	p.Title.Text = fmt.Sprintf("%s: %s privatization", title, names[mode])
	p.Y.Label.Text = fig.ylabel
	for _, t := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle, &p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		t.Font.Size = opt.FontSize
	}
	p.Title.TextStyle.Font.Size = opt.FontSize + 1
	var settings []string
	notions := map[string]string{}
	var eps []float64
	xOf := func(r results.Row) float64 { return r.Epsilon }
	if ax, ok := frontierAxes[opt.X]; ok {
		xOf = ax.value
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if r.Mode != mode {
			continue
		}
		if !slices.Contains(settings, r.Setting) {
			settings = append(settings, r.Setting)
			notions[r.Setting] = string(r.Notion)
		}
		if x := xOf(r); r.Seeds > 0 && !math.IsNaN(x) {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
			if !slices.Contains(eps, r.Epsilon) {
				eps = append(eps, r.Epsilon)
			}
		}
	}
	slices.Sort(eps)
	distinct := map[string]bool{}
	for _, n := range notions {
		distinct[n] = true
	}
	switch {
	case opt.X != "epsilon":
		p.X.Label.Text = frontierAxes[opt.X].label
	case len(distinct) > 1:
		p.X.Label.Text = "ε (per token; not comparable across the notions in the legend)"
	default:
		p.X.Label.Text = "ε (per token)"
	}
	p.X.Label.Text = wrapLabel(p.X.Label.TextStyle, p.X.Label.Text, opt.Width-2*opt.FontSize)
	// A log ε axis is drawn as a linear axis over log10 ε (px), ticks
	// labelled with ε: gonum's plot places an axis label's glyph box at
	// the data midpoint in linear terms, which on its LogScale pushed the
	// box, and squeezed the data area to a third of the panel.
	logX := opt.X == "epsilon" && lo > 0 && hi/lo > 10
	px := logTransform(logX)
	if opt.X == "epsilon" {
		p.X.Tick.Marker = epsilonTicks{values: eps, width: tickWidth(opt.Width, opt.FontSize), style: p.X.Tick.Label, log: logX}
		if logX {
			p.X.Scale = logAxis{}
		}
	}
	for i, s := range settings {
		c := okabeIto[i%len(okabeIto)]
		for _, se := range fig.series {
			var pts, upper, lower plotter.XYs
			for _, r := range rows {
				if r.Mode != mode || r.Setting != s || r.Seeds == 0 {
					continue
				}
				q, x := se.value(r), xOf(r)
				if math.IsNaN(q.mean) || math.IsNaN(x) {
					continue
				}
				pts = append(pts, plotter.XY{X: px(x), Y: q.mean})
				upper, lower = append(upper, plotter.XY{X: px(x), Y: q.mean + q.sd}), append(lower, plotter.XY{X: px(x), Y: q.mean - q.sd})
			}
			if len(pts) == 0 {
				continue
			}
			slices.SortFunc(pts, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
			slices.SortFunc(upper, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
			slices.SortFunc(lower, func(a, b plotter.XY) int { return -cmp.Compare(a.X, b.X) })
			if band := append(slices.Clone(upper), lower...); len(pts) > 1 && spread(upper, pts) {
				poly, err := plotter.NewPolygon(band)
				if err != nil {
					return nil, err
				}
				poly.Color = color.NRGBA{c.R, c.G, c.B, 0x38}
				poly.LineStyle.Width = 0
				p.Add(poly)
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			line.Color, points.Color = c, c
			line.Width = vg.Points(1.2)
			line.Dashes = se.dashes
			if se.dashes == nil && len(fig.series) == 1 {
				// One series a setting: dashes tell the settings apart. With
				// several (privacy's unchanged, per type, OOV), dashes are
				// the series' — solid, dotted, dashed as docs say — and
				// colour and marker the setting's.
				line.Dashes = settingDashes[i%len(settingDashes)]
			}
			points.Shape = plotutil.Shape(i)
			p.Add(line, points)
			label := s
			if len(distinct) > 1 && notions[s] != "" {
				label += " [" + notions[s] + "]"
			}
			if se.name != "" {
				label += " " + se.name
			}
			m.legend.add(label, line, points)
			h := &hover{series: label}
			for _, r := range rows {
				if r.Mode != mode || r.Setting != s || r.Seeds == 0 {
					continue
				}
				if q, x := se.value(r), xOf(r); !math.IsNaN(q.mean) && !math.IsNaN(x) {
					h.add(px(x), q.mean, pointTip(label, fig.ylabel, r, q, x, opt.X))
				}
			}
			p.Add(h)
			m.hovers = append(m.hovers, h)
		}
	}
	if err := refBand(p, m, px(lo), px(hi), fig.base, "unprivatized (± sd)", []vg.Length{vg.Points(4), vg.Points(3)}, 96); err != nil {
		return nil, err
	}
	if err := refBand(p, m, px(lo), px(hi), fig.chance, "chance (majority class)", []vg.Length{vg.Points(1), vg.Points(3)}, 64); err != nil {
		return nil, err
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// spread reports whether any point of a band differs from its line.
func spread(upper, pts plotter.XYs) bool {
	for i := range upper {
		if upper[i].Y != pts[i].Y {
			return true
		}
	}
	return false
}

// refBand draws a horizontal reference at q.mean over [lo, hi] (nothing
// when it is NaN or the range empty), grey at the given level, with a
// band of ± sd when there is one, and a legend entry.
func refBand(p *plot.Plot, m *marks, lo, hi float64, q quantityAt, label string, dashes []vg.Length, grey uint8) error {
	if math.IsNaN(q.mean) || lo > hi {
		return nil
	}
	if q.sd > 0 {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: q.mean - q.sd}, {X: hi, Y: q.mean - q.sd}, {X: hi, Y: q.mean + q.sd}, {X: lo, Y: q.mean + q.sd}})
		if err != nil {
			return err
		}
		poly.Color = color.NRGBA{grey, grey, grey, 0x30}
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: q.mean}, {X: hi, Y: q.mean}})
	if err != nil {
		return err
	}
	l.Dashes, l.Color = dashes, color.Gray{Y: grey}
	p.Add(l)
	m.legend.add(label, l)
	return nil
}
