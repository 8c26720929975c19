package results

import (
	"cmp"
	"encoding/csv"
	"fmt"
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
	"gonum.org/v1/plot/vg"

	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/spec"
)

// StatRow is one line of an analysis table: an analysis at one mechanism
// setting and ε, each statistic aggregated over seeds.
type StatRow struct {
	Analysis string
	Setting  string // "none" for an analysis without mechanism
	Notion   spec.Notion
	Epsilon  float64
	Seeds    int
	Failed   int
	Names    []string  // the statistics, in the analysis's order
	Mean, SD []float64 // over seeds (SD 0 for one seed)
	// CI is the half-width of the 95% t-interval of the mean over seeds
	// (NaN for one seed).
	CI []float64
	// Interval is a one-seed row's recorded interval of each statistic
	// its record gives one for, by name: a value estimated from draws
	// (E_M's over the draws), from a sample of words (a percentile's
	// order-statistic interval), or simulated within an otherwise exact
	// method (a query attack's N from simulated votes): absent where none.
	Interval map[string][2]float64
	// Bracket is, for each statistic a search stopped at (an ε found by
	// bisection), the hull over seeds of the brackets the searches left
	// open (metrics.Stat.Quantized): the value is known to no finer.
	Bracket map[string][2]float64
	// BySeed are each statistic's values by seed (the claims compare two
	// rows measured on the same seeds pairwise).
	BySeed BySeed
	// Examples are the first seed's example outputs per word.
	Examples map[string][]string
	// Series are the per-word values of the seeds' records pooled (each
	// seed samples its own words): plausible-deniability's N_w and S_w.
	Series map[string][]float64
	Method string
	Notes  []string
	// Flags are the seeds' records' flags (metrics.Analysis.Flags), each
	// once, with how many seeds raised it where not all did.
	Flags []string
}

// AnalysisTable aggregates analysis records into rows by setting and ε:
// by analysis, then the settings in order (the config's; unlisted ones
// after them, by name), then ε.
func AnalysisTable(recs []Record, order []string) []StatRow {
	type key struct {
		analysis, setting string
		eps               float64
	}
	groups := map[key][]Record{}
	var seen []key
	for _, r := range recs {
		if r.Cell.Analysis == "" {
			continue
		}
		k := key{r.Cell.Analysis, r.Cell.Setting(), r.Cell.Epsilon}
		if _, ok := groups[k]; !ok {
			seen = append(seen, k)
		}
		groups[k] = append(groups[k], r)
	}
	var rows []StatRow
	for _, k := range seen {
		row := StatRow{Analysis: k.analysis, Setting: k.setting, Epsilon: k.eps}
		values := map[string][]float64{}
		flagSeeds := map[string]int{}
		var flagOrder []string
		for _, r := range groups[k] {
			row.Notion = cmp.Or(row.Notion, r.Notion)
			if r.Status != "ok" || r.Analysis == nil {
				row.Failed++
				continue
			}
			row.Seeds++
			if row.Examples == nil {
				row.Examples, row.Method = r.Analysis.Examples, r.Analysis.Method
			}
			for name, xs := range r.Analysis.Series {
				if row.Series == nil {
					row.Series = map[string][]float64{}
				}
				for _, x := range xs {
					row.Series[name] = append(row.Series[name], float64(x))
				}
			}
			for _, n := range r.Analysis.Notes {
				if !slices.Contains(row.Notes, n) {
					row.Notes = append(row.Notes, n)
				}
			}
			for _, f := range r.Analysis.Flags {
				if flagSeeds[f] == 0 {
					flagOrder = append(flagOrder, f)
				}
				flagSeeds[f]++
			}
			for _, s := range r.Analysis.Stats {
				if !slices.Contains(row.Names, s.Name) {
					row.Names = append(row.Names, s.Name)
				}
				values[s.Name] = append(values[s.Name], float64(s.Value))
				row.BySeed.set(s.Name, r.Cell.Seed, float64(s.Value))
				if s.Quantized {
					if row.Bracket == nil {
						row.Bracket = map[string][2]float64{}
					}
					b, ok := row.Bracket[s.Name]
					if !ok {
						b = [2]float64{math.Inf(1), math.Inf(-1)}
					}
					row.Bracket[s.Name] = [2]float64{min(b[0], float64(s.Lo)), max(b[1], float64(s.Hi))}
				}
				if s.Simulated || s.Lo != s.Hi {
					if row.Interval == nil {
						row.Interval = map[string][2]float64{}
					}
					row.Interval[s.Name] = [2]float64{float64(s.Lo), float64(s.Hi)}
				}
			}
		}
		if row.Seeds != 1 {
			row.Interval = nil // over seeds the t-interval speaks
		}
		for _, f := range flagOrder {
			if n := flagSeeds[f]; n < row.Seeds {
				f = fmt.Sprintf("%s (%d of %d seeds)", f, n, row.Seeds)
			}
			row.Flags = append(row.Flags, f)
		}
		for _, n := range row.Names {
			m, sd, ci := meanSDCI(values[n])
			row.Mean, row.SD, row.CI = append(row.Mean, m), append(row.SD, sd), append(row.CI, ci)
		}
		rows = append(rows, row)
	}
	place := func(setting string) int {
		if i := slices.Index(order, setting); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(rows, func(a, b StatRow) int {
		return cmp.Or(strings.Compare(a.Analysis, b.Analysis), cmp.Compare(place(a.Setting), place(b.Setting)), strings.Compare(a.Setting, b.Setting), cmp.Compare(a.Epsilon, b.Epsilon))
	})
	return rows
}

// Stat returns the mean and sd of the named statistic (NaN when absent).
func (r StatRow) Stat(name string) (mean, sd float64) {
	i := slices.Index(r.Names, name)
	if i < 0 {
		return math.NaN(), math.NaN()
	}
	return r.Mean[i], r.SD[i]
}

// statNames are the statistics of all rows, in first-seen order.
func statNames(rows []StatRow) []string {
	var names []string
	for _, r := range rows {
		for _, n := range r.Names {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

func fnum(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "∞"
	case math.IsNaN(x):
		return "—"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// AnalysisMarkdown renders the rows: a table per analysis (or stage),
// one column per statistic, mean ± sd over seeds; then each row's example
// outputs and notes.
func AnalysisMarkdown(rows []StatRow) string {
	var b strings.Builder
	for i, g := range AnalysisGrids(rows) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(g.Markdown())
	}
	for _, e := range AnalysisExamples(rows) {
		fmt.Fprintf(&b, "\n%s:\n", e.Heading)
		for _, it := range e.Items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	return b.String()
}

// AnalysisGrids are the analysis tables of AnalysisMarkdown: one per
// analysis (captioned with its name when there are several), the
// neighbour distances pivoted to k by percentile.
func AnalysisGrids(rows []StatRow) []Grid {
	var out []Grid
	kinds := analysisKinds(rows)
	for _, kind := range kinds {
		mine := slices.DeleteFunc(slices.Clone(rows), func(r StatRow) bool { return r.Analysis != kind })
		if figures(kind).ByRank {
			out = append(out, neighbourGrids(mine)...)
			continue
		}
		var g Grid
		if len(kinds) > 1 {
			g.Caption = kind
		}
		names := statNames(mine)
		// A stage that finds ε reports it as a statistic; its rows have no
		// ε of their own, and two columns headed ε would be one too many.
		ownEps := !slices.Contains(names, "ε") || slices.ContainsFunc(mine, func(r StatRow) bool { return epsText(r) != "—" })
		g.column("mechanism", false)
		g.column("notion", false)
		if ownEps {
			g.column("ε", true)
		}
		g.column("seeds", true)
		for _, n := range names {
			g.column(n, true)
		}
		flagged := slices.ContainsFunc(mine, func(r StatRow) bool { return len(r.Flags) > 0 })
		if flagged {
			g.column("flags", false)
		}
		for _, r := range mine {
			row := []string{r.Setting, cmp.Or(string(r.Notion), "—")}
			if ownEps {
				row = append(row, epsText(r))
			}
			row = append(row, seedsText(r))
			for _, n := range names {
				row = append(row, meanSDText(r, n))
			}
			if flagged {
				row = append(row, strings.Join(r.Flags, "; "))
			}
			g.Rows = append(g.Rows, row)
		}
		out = append(out, g)
	}
	return out
}

// Examples are one analysis row's example outputs and notes, as printed
// under the tables.
type Examples struct {
	Heading string   // analysis, setting, ε and method
	Items   []string // "word → outputs", then "note: …"
}

// AnalysisExamples lists, per row that has them, its example outputs
// (by word) and its notes.
func AnalysisExamples(rows []StatRow) []Examples {
	var out []Examples
	for _, r := range rows {
		if len(r.Examples) == 0 && len(r.Notes) == 0 {
			continue
		}
		e := Examples{Heading: fmt.Sprintf("%s, %s, ε = %s (%s)", r.Analysis, r.Setting, epsText(r), r.Method)}
		for _, w := range slices.Sorted(maps.Keys(r.Examples)) {
			e.Items = append(e.Items, fmt.Sprintf("%s → %s", w, strings.Join(r.Examples[w], ", ")))
		}
		for _, n := range r.Notes {
			e.Items = append(e.Items, "note: "+n)
		}
		out = append(out, e)
	}
	return out
}

// neighbourGrids pivot the neighbour-distance statistics ("dK pP":
// distance to the K-th neighbour, P-th percentile) into a table of k by
// percentile, one per row.
func neighbourGrids(rows []StatRow) []Grid {
	var out []Grid
	for _, r := range rows {
		var ks, ps []string
		for _, n := range r.Names {
			k, p, ok := strings.Cut(n, " ")
			if _, err := strconv.Atoi(strings.TrimPrefix(k, "d")); !ok || err != nil || !strings.HasPrefix(k, "d") {
				continue
			}
			if !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
			if !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
		g := Grid{Caption: fmt.Sprintf("neighbours (distance to the k-th nearest candidate; %s seeds)", seedsText(r))}
		g.column("k", true)
		for _, p := range ps {
			g.column(p, true)
		}
		for _, k := range ks {
			row := []string{strings.TrimPrefix(k, "d")}
			for _, p := range ps {
				row = append(row, meanSDText(r, k+" "+p))
			}
			g.Rows = append(g.Rows, row)
		}
		out = append(out, g)
	}
	return out
}

// analysisKinds are the analyses (and stages) of the rows in first-seen
// order.
func analysisKinds(rows []StatRow) []string {
	var kinds []string
	for _, r := range rows {
		if !slices.Contains(kinds, r.Analysis) {
			kinds = append(kinds, r.Analysis)
		}
	}
	return kinds
}

func epsText(r StatRow) string {
	if r.Setting == "none" || r.Epsilon == 0 {
		return "—"
	}
	return strconv.FormatFloat(r.Epsilon, 'g', -1, 64)
}

func seedsText(r StatRow) string {
	s := strconv.Itoa(r.Seeds)
	if r.Failed > 0 {
		s += fmt.Sprintf(" (%d failed)", r.Failed)
	}
	return s
}

func meanSDText(r StatRow, name string) string {
	m, sd := r.Stat(name)
	cell := fnum(m)
	if r.Seeds > 1 && !math.IsNaN(sd) && sd > 0 {
		cell += " ± " + fnum(sd)
	}
	return cell
}

// WriteAnalysisTables writes tables/analysis.csv (mean, sd and the 95%
// CI half-width of each statistic) and tables/analysis.md.
func WriteAnalysisTables(dir string, rows []StatRow) ([]string, error) {
	td := filepath.Join(dir, "tables")
	if err := os.MkdirAll(td, 0o777); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	names := statNames(rows)
	var b strings.Builder
	w := csv.NewWriter(&b)
	head := []string{"analysis", "setting", "notion", "epsilon", "seeds", "failed"}
	for _, n := range names {
		head = append(head, n, n+" sd", n+" ci95")
	}
	w.Write(head)
	for _, r := range rows {
		line := []string{r.Analysis, r.Setting, string(r.Notion), strconv.FormatFloat(r.Epsilon, 'g', -1, 64), strconv.Itoa(r.Seeds), strconv.Itoa(r.Failed)}
		for _, n := range names {
			i := slices.Index(r.Names, n)
			if i < 0 {
				line = append(line, "", "", "")
				continue
			}
			line = append(line, strconv.FormatFloat(r.Mean[i], 'g', -1, 64), strconv.FormatFloat(r.SD[i], 'g', -1, 64), strconv.FormatFloat(r.CI[i], 'g', -1, 64))
		}
		w.Write(line)
	}
	w.Flush()
	var paths []string
	for name, text := range map[string]string{"analysis.csv": b.String(), "analysis.md": AnalysisMarkdown(rows)} {
		p := filepath.Join(td, name)
		if err := xio.WriteFileAtomic(p, []byte(text)); err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths, nil
}

// figures is the descriptor of analysis or stage a, which names the
// statistics its figures draw (spec.Descriptor.Figures, Tradeoffs,
// Histograms); an empty one for a name spec does not know.
func figures(a string) *spec.Descriptor {
	for _, k := range []spec.Kind{spec.Analysis, spec.Stage} {
		if d, err := spec.Lookup(k, a); err == nil {
			return d
		}
	}
	return &spec.Descriptor{}
}

// drawn reports whether PlotAnalysis draws a figure for analysis a: the
// neighbour percentiles, statistics versus ε, or trade-offs.
func drawn(a string) bool {
	d := figures(a)
	return d.ByRank || len(d.Figures) > 0 || len(d.Tradeoffs) > 0
}

// Undrawn lists the analyses of rows that PlotAnalysis draws no figure
// for (their numbers are in the tables only).
func Undrawn(rows []StatRow) []string {
	return slices.DeleteFunc(analysisKinds(rows), drawn)
}

// PlotAnalysis draws each analysis's figure under dir/plots (PNG, SVG and
// PDF), named after the analysis: for neighbours, distance against k with
// one line per percentile (Feyisetan Fig. 1); otherwise the analysis's
// statistics against ε, one line per mechanism setting, ± sd over seeds,
// and the privacy statistic against the utility loss where both exist;
// for plausible deniability also the histograms over words of N_w and
// S_w at each ε (Feyisetan Fig. 2; see histogramFigures). It returns the
// paths written.
func PlotAnalysis(dir, title string, rows []StatRow) ([]string, error) {
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

// AnalysisFigures are the figures PlotAnalysis draws of rows (see
// PlotAnalysis), not yet written: the report page inlines them as SVG.
func AnalysisFigures(title string, rows []StatRow) ([]Figure, error) {
	kinds := analysisKinds(rows)
	var out []Figure
	for _, a := range kinds {
		mine := slices.DeleteFunc(slices.Clone(rows), func(r StatRow) bool { return r.Analysis != a || r.Seeds == 0 })
		if len(mine) == 0 || !drawn(a) {
			continue
		}
		f := Figure{Name: a, Width: 4 * vg.Inch, Height: 3.6 * vg.Inch}
		var err error
		if figures(a).ByRank {
			f.Panels, err = neighbourPanels(title, mine, &f.marks)
		}
		for _, stat := range figures(a).Figures {
			var p *plot.Plot
			if p, err = statPanel(title, stat, mine, &f.marks); err != nil {
				break
			}
			if p != nil {
				f.Panels = append(f.Panels, p)
			}
		}
		for _, xy := range figures(a).Tradeoffs {
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
		for _, stat := range figures(a).Histograms {
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
func histogramFigures(base, title, stat string, rows []StatRow) ([]Figure, error) {
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
			hv := &hover{series: p.Title.Text}
			for _, bin := range h.Bins {
				hv.add((bin.Min+bin.Max)/2, bin.Weight, fmt.Sprintf("%s: %s in [%s, %s): %g words", p.Title.Text, stat, fnum(bin.Min), fnum(bin.Max), bin.Weight))
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
func tradeoffPanel(title, x, y string, rows []StatRow, m *marks) (*plot.Plot, error) {
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
				tips = append(tips, fmt.Sprintf("%s, ε = %s\n%s: %s\n%s: %s\nseeds: %s", s, epsText(r), x, meanSDText(r, x), y, meanSDText(r, y), seedsText(r)))
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
func statPanel(title, stat string, rows []StatRow, m *marks) (*plot.Plot, error) {
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
	if lo > 0 && hi/lo > 10 {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	for i, s := range settings {
		var pts plotter.XYs
		var errs plotter.YErrors
		var tips []string
		for _, r := range rows {
			if m, sd := r.Stat(stat); r.Setting == s && !math.IsNaN(m) && !math.IsInf(m, 0) {
				pts = append(pts, plotter.XY{X: r.Epsilon, Y: m})
				errs = append(errs, struct{ Low, High float64 }{sd, sd})
				tips = append(tips, fmt.Sprintf("%s, ε = %s\n%s: %s (± sd over seeds)\nseeds: %s", s, epsText(r), stat, meanSDText(r, stat), seedsText(r)))
			}
		}
		if err := addLine(p, i, s, pts, errs, tips, m); err != nil {
			return nil, err
		}
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// neighbourPanels plots the distance to the k-th neighbour against k, one
// line per percentile (statistics named "d<k> p<q>").
func neighbourPanels(title string, rows []StatRow, m *marks) ([]*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title + ": distance to the k-th nearest neighbour"
	p.X.Label.Text = "k"
	p.Y.Label.Text = "Euclidean distance"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	byQ := map[string]plotter.XYs{}
	var qs []string
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
		byQ[q] = append(byQ[q], plotter.XY{X: float64(k), Y: r.Mean[i]})
	}
	for i, q := range qs {
		var tips []string
		for _, pt := range byQ[q] {
			tips = append(tips, fmt.Sprintf("percentile %s, k = %g: distance %s (%s seeds)", q, pt.X, fnum(pt.Y), seedsText(r)))
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
