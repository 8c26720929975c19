package mech

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/xp-nlp/xp/spec"
)

// Params are a mechanism's parameters as a config gives them (besides ε):
// checked and completed with defaults by the mechanism's descriptor in
// spec.
type Params map[string]any

// Options are settings that do not change a mechanism's output.
type Options struct {
	Batch  int   // tokens per nearest-neighbour search (0: the space's Batch)
	Budget int64 // bytes of one block of scores or distances (0: 256 MiB)
	// Counts are the task data's word frequencies: CusText's input
	// vocabulary, SanText's candidates (candidates: task) and SanText+'s
	// sensitive words.
	Counts map[string]int64
	// Progress receives a progress bar over tokens when it is a terminal.
	Progress io.Writer
}

// builders construct each mechanism of spec's table from resolved
// parameters. Their ranges and defaults are the descriptors'; only rules
// that need the vectors (enough candidates for k neighbours or K words)
// are checked by the constructors themselves.
var builders = map[string]func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error){
	"laplace": func(s *Space, eps float64, _ spec.Values, o Options) (Mechanism, error) {
		return NewLaplace(s, eps, o.Batch)
	},
	"vickrey": func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		p := VickreyParams{ExcludeInput: v.Bool("exclude_input"), TR: v.Floats("t_r"), Rank: v.Int("rank"), Mahalanobis: v.Has("lambda"), Lambda: v.Float("lambda")}
		if p.TR == nil && p.Rank == 0 {
			p.T = v.Float("t")
		}
		return NewVickrey(s, eps, p, o.Batch)
	},
	"mahalanobis": func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		return NewMahalanobis(s, eps, v.Float("lambda"), o.Batch)
	},
	"santext": func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		var p SanTextParams
		if v.String("candidates") == "task" {
			if len(o.Counts) == 0 {
				return nil, fmt.Errorf("santext: candidates task needs the task's word counts")
			}
			p.Task = o.Counts
		}
		return NewSanText(s, eps, p, o.Budget)
	},
	"santext+": func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		return NewSanText(s, eps, SanTextParams{Plus: &SanTextPlus{P: v.Float("p"), SensitiveFraction: v.Float("sensitive"), Counts: o.Counts}}, o.Budget)
	},
	"tem": func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		p := TEMParams{Beta: v.Float("beta")}
		if v.Has("gamma") {
			p = TEMParams{Gamma: v.Float("gamma")}
		}
		return NewTEM(s, eps, p, o.Budget)
	},
	"diffractor": func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		return NewDiffractor(s, eps, DiffractorParams{Method: v.String("method"), Gamma: v.Int("gamma"), ReplaceStopwords: v.Bool("replace_stopwords")}, o.Progress)
	},
	"truncated-gumbel": func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		return NewGumbel(s, eps, GumbelParams{MinDist: v.Float("min_dist"), MaxDist: v.Float("max_dist")})
	},
	"custext":  custextBuilder(false),
	"custext+": custextBuilder(true),
}

func custextBuilder(plus bool) func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
	return func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		return NewCusText(s, eps, custextParams(v, plus), o.Counts)
	}
}

func custextParams(v spec.Values, plus bool) CusTextParams {
	return CusTextParams{K: v.Int("k"), Mapping: v.String("mapping"), Score: v.String("score"), Strategy: v.String("strategy"), Removed: v.String("removed"), KeepStopwords: plus}
}

// Prebuilt reports whether building the named mechanism with these
// parameters over space (its Emb and CacheDir; no index needed) for a
// task of these word counts would read its costly precomputed structure
// from the space's cache — CusText's mapping — rather than compute it:
// for estimates. Mechanisms without such a structure are prebuilt.
func Prebuilt(space *Space, name string, p Params, counts map[string]int64) bool {
	if name != "custext" && name != "custext+" {
		return true
	}
	_, v, err := spec.Resolve(spec.Mechanism, name, 1, p)
	if err != nil {
		return false
	}
	cp, err := custextParams(v, name == "custext+").resolve(1)
	if err != nil || space.CacheDir == "" {
		return false
	}
	_, err = os.Stat(filepath.Join(space.CacheDir, mappingKey(space, custextInputs(space, counts, cp.stopwords()), cp)))
	return err == nil
}

// exactNames are the mechanisms whose output distribution is known in
// closed form (they implement Distributions, which analyses read instead
// of drawing): for estimates made before any mechanism is built.
var exactNames = map[string]bool{"santext": true, "santext+": true, "tem": true, "custext": true, "custext+": true, "diffractor": true}

// Exact reports whether the named mechanism's output distribution is
// known in closed form.
func Exact(name string) bool { return exactNames[name] }

// searchNames are the mechanisms whose work per token is one search of
// the nearest candidates of a noisy vector (noisyNN's): their speeds on
// one machine were within 1.5× of each other in BenchmarkScoring on the
// two CPUs measured since Mahalanobis' transform moved to C
// (docs/performance.md).
var searchNames = []string{"laplace", "mahalanobis", "vickrey"}

// SameSearch returns the other mechanisms whose work per token is, as
// name's is, one nearest-neighbour search of a noisy vector (nil where
// name's is not): for estimates, which may price one at another's
// measured speed.
func SameSearch(name string) []string {
	if !slices.Contains(searchNames, name) {
		return nil
	}
	var out []string
	for _, n := range searchNames {
		if n != name {
			out = append(out, n)
		}
	}
	return out
}

// New builds the named mechanism at ε. Unknown names, unknown parameters
// and values of the wrong type or range are errors, by the rules of the
// mechanism's descriptor in spec.
func New(name string, space *Space, eps float64, p Params, opt Options) (Mechanism, error) {
	_, v, err := spec.Resolve(spec.Mechanism, name, eps, p)
	if err != nil {
		return nil, err
	}
	build, ok := builders[name]
	if !ok {
		return nil, fmt.Errorf("mechanism %s is described in spec but not built by mech", name)
	}
	if opt.Batch == 0 && space != nil {
		opt.Batch = space.Batch
	}
	m, err := build(space, eps, v, opt)
	if err != nil {
		return nil, err
	}
	if p, ok := m.(progressor); ok {
		p.setProgress(opt.Progress)
	}
	return m, nil
}

// progressor is implemented by the mechanisms that show a progress bar
// while they privatize (CusText draws from precomputed distributions: it
// has none).
type progressor interface {
	setProgress(w io.Writer)
}

func (m *SanText) setProgress(w io.Writer)    { m.progress = w }
func (m *Diffractor) setProgress(w io.Writer) { m.progress = w }
func (m *Gumbel) setProgress(w io.Writer)     { m.progress = w }

// check validates a typed constructor's arguments by the descriptor of
// the named mechanism (the one place each rule lives) and returns them
// resolved.
func check(name string, eps float64, raw map[string]any) (spec.Values, error) {
	_, v, err := spec.Resolve(spec.Mechanism, name, eps, raw)
	return v, err
}
