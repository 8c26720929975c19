package results

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/xp-nlp/xp/internal/xio"
)

// Plot draws two figures under dir/plots, each as PNG and SVG, one panel
// per privatized mode (train-time, test-time, both), one line per
// mechanism setting, ε on a log axis when it spans more than a decade:
// accuracy versus ε (± sd error bars over seeds, the unprivatized baseline
// dashed, the chance level dotted; labelled attacker accuracy when the
// label is a private attribute), and privacy versus ε (the share of
// in-vocabulary tokens left unchanged, solid, the per-word-type unchanged
// rate, dotted, and of out-of-vocabulary tokens passed through, dashed). It returns the paths written.
func Plot(dir, title string, rows []Row) ([]string, error) {
	var modes []string
	base, chance := math.NaN(), math.NaN()
	accLabel := "accuracy"
	for _, r := range rows {
		if r.Seeds == 0 {
			continue // every seed failed: nothing to draw
		}
		if r.Attacker != "" {
			accLabel = r.Attacker + " attacker accuracy (lower = more private)"
		}
		if math.IsNaN(chance) {
			chance = r.Chance
		}
		if r.Mode == "none" {
			base = r.Accuracy
		} else if !slices.Contains(modes, r.Mode) {
			modes = append(modes, r.Mode)
		}
	}
	slices.SortFunc(modes, func(a, b string) int { return modeRank(a) - modeRank(b) })
	if len(modes) == 0 {
		return nil, fmt.Errorf("results: nothing to plot (no privatized cell succeeded)")
	}
	pd := filepath.Join(dir, "plots")
	if err := os.MkdirAll(pd, 0o777); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var paths []string
	for _, fig := range []struct {
		name, ylabel string
		series       []quantity
		baseline     float64
		chance       float64
		shares       bool // the y axis spans [0, 1]
	}{
		{"accuracy", accLabel, []quantity{{"", func(r Row) (float64, float64) { return r.Accuracy, r.AccSD }, nil}}, base, chance, false},
		{"privacy", "share of tokens", []quantity{
			{"unchanged (in-vocab)", func(r Row) (float64, float64) { return r.Unchanged, 0 }, nil},
			{"unchanged per word type", func(r Row) (float64, float64) { return r.TypeUnchanged, 0 }, []vg.Length{vg.Points(1), vg.Points(2)}},
			{"OOV", func(r Row) (float64, float64) { return r.OOV, 0 }, []vg.Length{vg.Points(3), vg.Points(2)}},
		}, math.NaN(), math.NaN(), true},
	} {
		var panels []*plot.Plot
		for _, mode := range modes {
			p, err := panel(title, mode, fig.ylabel, rows, fig.series, fig.baseline, fig.chance)
			if err != nil {
				return nil, fmt.Errorf("results: plot %s: %w", fig.name, err)
			}
			if fig.shares {
				p.Y.Min, p.Y.Max = 0, 1
			}
			panels = append(panels, p)
		}
		written, err := writeFigure(filepath.Join(pd, fig.name), panels)
		if err != nil {
			return nil, err
		}
		paths = append(paths, written...)
	}
	return paths, nil
}

// quantity is one number drawn per setting: its name in the legend (""
// for the setting alone), its value and spread, its dash pattern.
type quantity struct {
	name   string
	value  func(Row) (mean, sd float64)
	dashes []vg.Length
}

// writeFigure lays the panels out in a row and writes base.png and
// base.svg atomically.
func writeFigure(base string, panels []*plot.Plot) ([]string, error) {
	w, h := vg.Length(len(panels))*4*vg.Inch, 3.6*vg.Inch
	var paths []string
	for _, ext := range []string{"png", "svg"} {
		var c draw.Canvas
		var save func(*os.File) error
		switch ext {
		case "png":
			img := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(150))}
			c, save = draw.New(img), func(f *os.File) error { _, err := img.WriteTo(f); return err }
		default:
			svg := vgsvg.New(w, h)
			c, save = draw.New(svg), func(f *os.File) error { _, err := svg.WriteTo(f); return err }
		}
		tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
		canvases := plot.Align([][]*plot.Plot{panels}, tiles, c)
		for i, p := range panels {
			p.Draw(canvases[0][i])
		}
		path := base + "." + ext
		if err := writeVia(path, save); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
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

func panel(title, mode, ylabel string, rows []Row, ss []quantity, base, chance float64) (*plot.Plot, error) {
	p := plot.New()
	names := map[string]string{"train": "train-time", "test": "test-time", "both": "train and test"}
	p.Title.Text = fmt.Sprintf("%s: %s privatization", title, names[mode])
	p.X.Label.Text = "ε"
	p.Y.Label.Text = ylabel
	p.Legend.Top = false
	p.Legend.Left = false
	var settings []string
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if r.Mode == mode && !slices.Contains(settings, r.Setting) {
			settings = append(settings, r.Setting)
		}
		if r.Mode == mode && r.Seeds > 0 {
			lo, hi = math.Min(lo, r.Epsilon), math.Max(hi, r.Epsilon)
		}
	}
	if lo > 0 && hi/lo > 10 {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	for i, s := range settings {
		for _, se := range ss {
			var pts plotter.XYs
			var errs plotter.YErrors
			for _, r := range rows {
				if r.Mode != mode || r.Setting != s || r.Seeds == 0 {
					continue
				}
				if m, sd := se.value(r); !math.IsNaN(m) {
					pts = append(pts, plotter.XY{X: r.Epsilon, Y: m})
					errs = append(errs, struct{ Low, High float64 }{sd, sd})
				}
			}
			if len(pts) == 0 {
				continue
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
			line.Dashes = se.dashes
			points.Shape = plotutil.Shape(i)
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYer
				plotter.YErrorer
			}{pts, errs})
			if err != nil {
				return nil, err
			}
			eb.Color = plotutil.Color(i)
			p.Add(line, points, eb)
			label := s
			if se.name != "" {
				label += " " + se.name
			}
			p.Legend.Add(label, line, points)
		}
	}
	if err := refLine(p, lo, hi, base, "unprivatized", []vg.Length{vg.Points(4), vg.Points(3)}, 96); err != nil {
		return nil, err
	}
	if err := refLine(p, lo, hi, chance, "chance (majority class)", []vg.Length{vg.Points(1), vg.Points(3)}, 64); err != nil {
		return nil, err
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// refLine draws a horizontal reference at y over [lo, hi] (nothing when y
// is NaN or the range empty), grey at the given level, with a legend entry.
func refLine(p *plot.Plot, lo, hi, y float64, label string, dashes []vg.Length, grey uint8) error {
	if math.IsNaN(y) || lo > hi {
		return nil
	}
	l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: y}, {X: hi, Y: y}})
	if err != nil {
		return err
	}
	l.Dashes, l.Color = dashes, color.Gray{Y: grey}
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}
