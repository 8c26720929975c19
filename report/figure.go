package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/xp-nlp/xp/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is one figure: panels laid out in a row, each Width × Height.
// Plot and PlotAnalysis write figures as files; the report page inlines
// them as SVG (Figure.SVG), drawn by the same code.
type Figure struct {
	// Name is the figure's file name without extension (accuracy,
	// privacy, bayes-adversary, …).
	Name          string
	Panels        []*plot.Plot
	Width, Height vg.Length
	marks
}

// marks are what a figure's panels note while they are built: the
// points the page marks for hovering, and the legend's entries, which the
// figure draws once, below its panels, outside every panel's data.
type marks struct {
	hovers []*hover
	legend legendEntries
}

// legendEntries are a figure's legend: one entry per label, in the order
// first added (panels of one figure share their settings).
type legendEntries []legendEntry

type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

func (l *legendEntries) add(label string, thumbs ...plot.Thumbnailer) {
	for _, e := range *l {
		if e.label == label {
			return
		}
	}
	*l = append(*l, legendEntry{label, thumbs})
}

// Legend layout: thumbnails as wide as gonum/plot's default, a gap after
// each column, a margin above and below the legend's strip.
const (
	legendThumb  = vg.Length(20)
	legendGap    = vg.Length(10)
	legendMargin = vg.Length(4)
)

// legendStyle is the text style of the figure's legend: its first
// panel's (the font size its maker chose).
func (f Figure) legendStyle() text.Style {
	if len(f.Panels) == 0 {
		return plot.NewLegend().TextStyle
	}
	return f.Panels[0].Legend.TextStyle
}

// legendGrid is how the legend's entries are laid out across the
// figure's width: columns of equal width, filled row by row.
func (f Figure) legendGrid() (cols, rows int, colWidth, rowHeight vg.Length) {
	n := len(f.marks.legend)
	if n == 0 {
		return 0, 0, 0, 0
	}
	sty := f.legendStyle()
	em := sty.Rectangle(" ").Max.X
	for _, e := range f.marks.legend {
		colWidth = max(colWidth, legendThumb+em+sty.Width(e.label)+legendGap)
		rowHeight = max(rowHeight, sty.Rectangle(e.label).Max.Y)
	}
	rowHeight *= 1.3
	w, _ := f.panelsSize()
	cols = max(1, min(n, int((w-2*legendMargin)/colWidth)))
	rows = (n + cols - 1) / cols
	return cols, rows, colWidth, rowHeight
}

// legendHeight is the height of the strip below the panels that holds
// the legend (0 without one).
func (f Figure) legendHeight() vg.Length {
	_, rows, _, rowHeight := f.legendGrid()
	if rows == 0 {
		return 0
	}
	return vg.Length(rows)*rowHeight + 2*legendMargin
}

// layout splits c into the panels' canvases, in a row above, and the
// legend's strip below.
func (f Figure) layout(c draw.Canvas) (panels []draw.Canvas, legend draw.Canvas) {
	legend = c
	legend.Max.Y = c.Min.Y + f.legendHeight()
	above := c
	above.Min.Y = legend.Max.Y
	tiles := draw.Tiles{Rows: 1, Cols: len(f.Panels), PadX: vg.Millimeter * 3, PadTop: vg.Millimeter * 1, PadBottom: vg.Millimeter * 1, PadLeft: vg.Millimeter * 1, PadRight: vg.Millimeter * 2}
	return plot.Align([][]*plot.Plot{f.Panels}, tiles, above)[0], legend
}

// draw lays the panels out in a row on c, the legend below them.
func (f Figure) draw(c draw.Canvas) {
	panels, strip := f.layout(c)
	for i, p := range f.Panels {
		p.Draw(panels[i])
	}
	cols, _, colWidth, rowHeight := f.legendGrid()
	sty := f.legendStyle()
	em := sty.Rectangle(" ").Max.X
	descent := sty.FontExtents().Descent
	for i, e := range f.marks.legend {
		x := strip.Min.X + legendMargin + vg.Length(i%cols)*colWidth
		y := strip.Max.Y - legendMargin - vg.Length(i/cols+1)*rowHeight
		icon := &draw.Canvas{Canvas: strip.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + legendThumb, Y: y + rowHeight}}}
		for _, t := range e.thumbs {
			t.Thumbnail(icon)
		}
		strip.FillText(sty, vg.Point{X: x + legendThumb + em, Y: y + (rowHeight-sty.Rectangle(e.label).Max.Y)/2 + descent}, e.label)
	}
}

// panelsSize is the size of the row of panels.
func (f Figure) panelsSize() (w, h vg.Length) { return vg.Length(len(f.Panels)) * f.Width, f.Height }

// size is the whole figure's: the panels and the legend below them.
func (f Figure) size() (w, h vg.Length) {
	w, h = f.panelsSize()
	return w, h + f.legendHeight()
}

// write writes base.<format> for each format, atomically.
func (f Figure) write(base string, formats []string) ([]string, error) {
	w, h := f.size()
	var paths []string
	for _, ext := range formats {
		var c draw.Canvas
		var save func(*os.File) error
		switch ext {
		case "png":
			img := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(200))}
			c, save = draw.New(img), func(f *os.File) error { _, err := img.WriteTo(f); return err }
		case "pdf":
			pdf := vgpdf.New(w, h)
			pdf.EmbedFonts(true)
			c, save = draw.New(pdf), func(f *os.File) error { _, err := pdf.WriteTo(f); return err }
		default:
			svg := vgsvg.New(w, h)
			c, save = draw.New(svg), func(f *os.File) error { _, err := svg.WriteTo(f); return err }
		}
		f.draw(c)
		path := base + "." + ext
		if err := writeVia(path, save); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// SVG draws the figure as an SVG element to inline in an HTML page: no
// XML prologue, scaled to its container's width, titled for screen
// readers (role img, the title given), and with one group per data
// series (class "series", data-series its name) of transparent marks over
// its points, each with a <title> that a browser shows on hover: the
// point's value, spread, interval and seeds.
func (f Figure) SVG(title string) ([]byte, error) {
	w, h := f.size()
	svg := vgsvg.New(w, h)
	f.draw(draw.New(svg))
	var buf bytes.Buffer
	if _, err := svg.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("results: figure %s: %w", f.Name, err)
	}
	b := buf.Bytes()
	start := bytes.Index(b, []byte("<svg "))
	end := bytes.LastIndex(b, []byte("</svg>"))
	if start < 0 || end < start {
		return nil, fmt.Errorf("results: figure %s: the SVG writer's output has no <svg> element", f.Name)
	}
	var out bytes.Buffer
	// At most its drawn size (1 pt = 4/3 CSS px) × 1.5: the page may
	// shrink a figure but not blow its text up.
	fmt.Fprintf(&out, `<svg class="figure" role="img" aria-label="%s" data-figure="%s" data-series-count="%d" style="max-width: %.0fpx" preserveAspectRatio="xMinYMin meet" `,
		html.EscapeString(title), html.EscapeString(f.Name), len(f.marks.hovers), 2*w.Points())
	rest := b[start+len("<svg ") : end]
	// Scale with the page: the viewBox keeps the drawing's proportions.
	rest = svgSize.ReplaceAll(rest, []byte(`width="100%"`))
	rest = fitText(rest)
	out.Write(rest)
	fmt.Fprintf(&out, "<title>%s</title>\n", html.EscapeString(title))
	for _, hv := range f.marks.hovers {
		fmt.Fprintf(&out, `<g class="series" data-series="%s">`, html.EscapeString(hv.series))
		for i, at := range hv.at {
			x, y := at.X.Points(), h.Points()-at.Y.Points()
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
				continue
			}
			fmt.Fprintf(&out, `<circle cx="%.2f" cy="%.2f" r="4"><title>%s</title></circle>`, x, y, html.EscapeString(hv.tips[i]))
		}
		out.WriteString("</g>\n")
	}
	out.WriteString("</svg>")
	return out.Bytes(), nil
}

// svgText is a text element as vgsvg writes it: its position, style and
// escaped string.
var svgText = regexp.MustCompile(`<text ([^>]*)style="([^"]*)">([^<]*)</text>`)

// fitText makes the figure's text as wide as the plot measured it, in
// whatever font the reader's browser substitutes for Liberation Serif
// (absent from most machines; Times New Roman has its metrics): each
// text element gets the width gonum/plot laid it out with as its
// textLength, and the family falls back to Times, then any serif. Without
// it a wider fallback spills legends over the lines.
func fitText(svg []byte) []byte {
	return svgText.ReplaceAllFunc(svg, func(m []byte) []byte {
		sub := svgText.FindSubmatch(m)
		attrs, style, str := string(sub[1]), string(sub[2]), string(sub[3])
		var size float64
		for _, kv := range strings.Split(style, ";") {
			if v, ok := strings.CutPrefix(kv, "font-size:"); ok {
				size, _ = strconv.ParseFloat(strings.TrimSuffix(v, "px"), 64)
			}
		}
		if size <= 0 || !strings.Contains(style, "font-family:Liberation Serif;") || !strings.Contains(style, "font-weight:normal;font-style:normal") {
			return m
		}
		face := font.DefaultCache.Lookup(plot.DefaultFont, font.Length(size))
		width := face.Width(html.UnescapeString(str)).Points()
		style = strings.Replace(style, "font-family:Liberation Serif;", "font-family:'Liberation Serif','Times New Roman',Times,serif;", 1)
		return fmt.Appendf(nil, `<text %stextLength="%.2f" lengthAdjust="spacingAndGlyphs" style="%s">%s</text>`, attrs, width, style, str)
	})
}

// svgSize is the fixed size vgsvg gives its root element.
var svgSize = regexp.MustCompile(`^width="[0-9.e+-]+pt" height="[0-9.e+-]+pt"`)

// hover records one data series' points for the page: where the last
// drawing put them and what hovering each tells. It draws nothing and
// takes no part in the axes' ranges.
type hover struct {
	series string
	pts    []struct{ x, y float64 }
	tips   []string
	at     []vg.Point
}

func (h *hover) add(x, y float64, tip string) {
	h.pts = append(h.pts, struct{ x, y float64 }{x, y})
	h.tips = append(h.tips, tip)
}

// Plot implements plot.Plotter: it notes where the points fall on c.
func (h *hover) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	h.at = h.at[:0]
	for _, pt := range h.pts {
		h.at = append(h.at, vg.Point{X: trX(pt.x), Y: trY(pt.y)})
	}
}

// pointTip is the hover text of a utility point: the series, where it is,
// its mean ± sd, its 95% interval where the quantity has one, and its
// seeds.
func pointTip(series, ylabel string, r results.Row, q quantityAt, x float64, axis string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s", series, r.Mode)
	if axis == "epsilon" {
		fmt.Fprintf(&b, ", ε = %s", strconv.FormatFloat(r.Epsilon, 'g', -1, 64))
	} else {
		fmt.Fprintf(&b, ", ε = %s, %s = %.4f", strconv.FormatFloat(r.Epsilon, 'g', -1, 64), axis, x)
	}
	fmt.Fprintf(&b, "\n%s: %.4f", ylabel, q.mean)
	if r.Seeds > 1 {
		fmt.Fprintf(&b, " ± %.4f (sd)", q.sd)
	}
	if ci := q.ci; !math.IsNaN(ci) && ci > 0 { // seeds that agree: no interval of zero width
		fmt.Fprintf(&b, ", 95%% CI [%.4f, %.4f]", q.mean-ci, q.mean+ci)
	}
	fmt.Fprintf(&b, "\nseeds: %d", r.Seeds)
	if r.Failed > 0 {
		fmt.Fprintf(&b, " (%d failed)", r.Failed)
	}
	return b.String()
}
