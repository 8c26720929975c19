package mech

import (
	"fmt"
	"io"
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

// kind is what mech knows of one mechanism beyond its descriptor in
// spec, declared once in the mechanism's own file: how it is built from
// resolved parameters (ranges and defaults are the descriptor's; only
// rules that need the vectors — enough candidates for k neighbours or K
// words — are the constructor's own), whether its output distribution is
// known in closed form (it implements Distributions, which analyses read
// instead of drawing), whether its work per token is one nearest-neighbour
// search of a noisy vector (noisyNN's: estimates may price it at another
// such mechanism's speed), and, where it builds a costly structure that
// the cache keeps, whether that is cached already.
type kind struct {
	name   string
	build  func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error)
	exact  bool
	search bool
	// cached reports whether the structure the mechanism would build over
	// space for a task of these word counts is in the space's cache (nil:
	// it builds none worth caching).
	cached func(space *Space, v spec.Values, counts map[string]int64) bool
}

// kinds are the mechanisms mech builds, one per descriptor of spec
// (TestEveryDescriptorBuilt); each value lives in its mechanism's file.
var kinds = []kind{laplaceKind, vickreyKind, mahalanobisKind, santextKind, santextPlusKind, temKind, diffractorKind, gumbelKind, custextKind, custextPlusKind}

// kindOf is the named mechanism's kind.
func kindOf(name string) (kind, bool) {
	i := slices.IndexFunc(kinds, func(k kind) bool { return k.name == name })
	if i < 0 {
		return kind{}, false
	}
	return kinds[i], true
}

// Prebuilt reports whether building the named mechanism with these
// parameters over space (its Emb and CacheDir; no index needed) for a
// task of these word counts would read its costly precomputed structure
// from the space's cache — CusText's mapping — rather than compute it:
// for estimates. Mechanisms without such a structure are prebuilt.
func Prebuilt(space *Space, name string, p Params, counts map[string]int64) bool {
	k, ok := kindOf(name)
	if !ok || k.cached == nil {
		return true
	}
	_, v, err := spec.Resolve(spec.Mechanism, name, 1, p)
	if err != nil {
		return false
	}
	return k.cached(space, v, counts)
}

// Exact reports whether the named mechanism's output distribution is
// known in closed form.
func Exact(name string) bool {
	k, _ := kindOf(name)
	return k.exact
}

// SameSearch returns the other mechanisms whose work per token is, as
// name's is, one nearest-neighbour search of a noisy vector (nil where
// name's is not): for estimates, which may price one at another's
// measured speed (their speeds are close: BenchmarkScoring,
// docs/performance.md).
func SameSearch(name string) []string {
	if k, ok := kindOf(name); !ok || !k.search {
		return nil
	}
	var out []string
	for _, k := range kinds {
		if k.search && k.name != name {
			out = append(out, k.name)
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
	k, ok := kindOf(name)
	if !ok {
		return nil, fmt.Errorf("mechanism %s is described in spec but not built by mech", name)
	}
	if opt.Batch == 0 && space != nil {
		opt.Batch = space.Batch
	}
	m, err := k.build(space, eps, v, opt)
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

// check validates a typed constructor's arguments by the descriptor of
// the named mechanism (the one place each rule lives) and returns them
// resolved.
func check(name string, eps float64, raw map[string]any) (spec.Values, error) {
	_, v, err := spec.Resolve(spec.Mechanism, name, eps, raw)
	return v, err
}
