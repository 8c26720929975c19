package mech

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
)

// Params are a mechanism's parameters as a config gives them (besides ε).
type Params map[string]any

// Options are settings that do not change a mechanism's output.
type Options struct {
	Batch  int   // tokens per nearest-neighbour search (0: 1024)
	Budget int64 // bytes of one block of scores or distances (0: 256 MiB)
	// Counts are the task data's word frequencies (SanText+).
	Counts map[string]int64
	// Progress receives a progress bar over tokens when it is a terminal.
	Progress io.Writer
}

type builder struct {
	doc    string
	params map[string]string // name → description
	build  func(space *Space, eps float64, p reader, opt Options) (Mechanism, error)
}

var registry = map[string]builder{
	"laplace": {doc: "multivariate Laplace (Feyisetan et al. 2020)", params: map[string]string{},
		build: func(s *Space, eps float64, _ reader, o Options) (Mechanism, error) {
			return NewLaplace(s, eps, o.Batch)
		}},
	"vickrey": {doc: "Vickrey (Xu et al. 2021)", params: map[string]string{
		"t": "float in [0, 1] (default 0.5)", "exclude_input": "bool (default false: keep the metric-DP guarantee)",
		"t_r": "list of floats: generalized k-neighbour form", "rank": "int: deterministic r-th nearest neighbour"},
		build: func(s *Space, eps float64, p reader, o Options) (Mechanism, error) {
			vp := VickreyParams{T: p.float("t", 0.5), ExcludeInput: p.bool("exclude_input"), TR: p.floats("t_r"), Rank: p.int("rank")}
			if p.err != nil {
				return nil, p.err
			}
			return NewVickrey(s, eps, vp, o.Batch)
		}},
	"mahalanobis": {doc: "Mahalanobis (Xu et al. 2020)", params: map[string]string{"lambda": "float in [0, 1] (default 0.2)"},
		build: func(s *Space, eps float64, p reader, o Options) (Mechanism, error) {
			l := p.float("lambda", 0.2)
			if p.err != nil {
				return nil, p.err
			}
			return NewMahalanobis(s, eps, l, o.Batch)
		}},
	"santext": {doc: "SanText (Yue et al. 2021)", params: map[string]string{},
		build: func(s *Space, eps float64, _ reader, o Options) (Mechanism, error) {
			return NewSanText(s, eps, nil, o.Budget)
		}},
	"santext+": {doc: "SanText+ (Yue et al. 2021)", params: map[string]string{
		"p": "float in [0, 1] (default 0.3)", "sensitive": "float in (0, 1] (default 0.9)"},
		build: func(s *Space, eps float64, p reader, o Options) (Mechanism, error) {
			sp := &SanTextPlus{P: p.float("p", 0.3), SensitiveFraction: p.float("sensitive", 0.9), Counts: o.Counts}
			if p.err != nil {
				return nil, p.err
			}
			if sp.Counts == nil {
				return nil, fmt.Errorf("santext+: needs the task's word counts")
			}
			return NewSanText(s, eps, sp, o.Budget)
		}},
	"custext":  custextBuilder(false),
	"custext+": custextBuilder(true),
}

func custextBuilder(plus bool) builder {
	return builder{doc: "CusText (Chen et al. 2023); + keeps NLTK stopwords", params: map[string]string{
		"k": "int output-set size (default 20)", "mapping": "aggressive | balanced (default) | conservative",
		"score": "euclidean (default) | cosine", "strategy": "token (default) | record | dataset"},
		build: func(s *Space, eps float64, p reader, o Options) (Mechanism, error) {
			cp := CusTextParams{K: p.int("k"), Mapping: p.string("mapping"), Score: p.string("score"), Strategy: p.string("strategy"), KeepStopwords: plus}
			if cp.K == 0 {
				cp.K = 20
			}
			if p.err != nil {
				return nil, p.err
			}
			if o.Counts == nil {
				return nil, fmt.Errorf("custext: needs the task's word counts (its input vocabulary)")
			}
			return NewCusText(s, eps, cp, o.Counts)
		}}
}

// Names lists the registered mechanisms.
func Names() []string {
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// ParamDoc describes a mechanism's parameters.
func ParamDoc(name string) (string, map[string]string, bool) {
	b, ok := registry[name]
	return b.doc, b.params, ok
}

// New builds the named mechanism at ε. Unknown names, unknown parameters
// and values of the wrong type or range are errors.
func New(name string, space *Space, eps float64, p Params, opt Options) (Mechanism, error) {
	b, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown mechanism %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	for k := range p {
		if _, ok := b.params[k]; !ok {
			var known []string
			for n := range b.params {
				known = append(known, n)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("%s: unknown parameter %q (known: %s)", name, k, strings.Join(known, ", "))
		}
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("%s: ε = %v, want a finite value > 0", name, eps)
	}
	m, err := b.build(space, eps, reader{name: name, p: p}, opt)
	if err != nil {
		return nil, err
	}
	switch x := m.(type) {
	case *Laplace:
		x.nn.progress = opt.Progress
	case *Vickrey:
		x.nn.progress = opt.Progress
	case *Mahalanobis:
		x.nn.progress = opt.Progress
	case *SanText:
		x.progress = opt.Progress
	}
	return m, nil
}

// reader reads typed parameters, keeping the first error.
type reader struct {
	name string
	p    Params
	err  error
}

func (r *reader) fail(k string, v any, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: parameter %s = %v (%T), want %s", r.name, k, v, v, want)
	}
}

func (r *reader) float(k string, def float64) float64 {
	v, ok := r.p[k]
	if !ok {
		return def
	}
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	r.fail(k, v, "a number")
	return def
}

func (r *reader) int(k string) int {
	v, ok := r.p[k]
	if !ok {
		return 0
	}
	if x, ok := v.(int); ok && x > 0 {
		return x
	}
	r.fail(k, v, "a positive integer")
	return 0
}

func (r *reader) string(k string) string {
	v, ok := r.p[k]
	if !ok {
		return ""
	}
	if x, ok := v.(string); ok {
		return x
	}
	r.fail(k, v, "a string")
	return ""
}

func (r *reader) bool(k string) bool {
	v, ok := r.p[k]
	if !ok {
		return false
	}
	if x, ok := v.(bool); ok {
		return x
	}
	r.fail(k, v, "true or false")
	return false
}

func (r *reader) floats(k string) []float64 {
	v, ok := r.p[k]
	if !ok {
		return nil
	}
	switch x := v.(type) {
	case []float64:
		return x
	case []any:
		out := make([]float64, len(x))
		for i, e := range x {
			switch f := e.(type) {
			case float64:
				out[i] = f
			case int:
				out[i] = float64(f)
			default:
				r.fail(k, v, "a list of numbers")
				return nil
			}
		}
		return out
	}
	r.fail(k, v, "a list of numbers")
	return nil
}

// Check validates a mechanism's name, ε and parameters (names, types and
// ranges) without building it: what a config validator needs before any
// work starts. New may still reject combinations that need the vectors.
func Check(name string, eps float64, p Params) error {
	b, ok := registry[name]
	if !ok {
		return fmt.Errorf("unknown mechanism %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return fmt.Errorf("%s: ε = %v, want a finite value > 0", name, eps)
	}
	r := reader{name: name, p: p}
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if _, ok := b.params[k]; !ok {
			return fmt.Errorf("%s: unknown parameter %q (known: %s)", name, k, strings.Join(slices.Sorted(maps.Keys(b.params)), ", "))
		}
		unit := func(x float64, lo0 bool) bool { return x <= 1 && (x > 0 || (lo0 && x == 0)) }
		switch k {
		case "t", "lambda", "p":
			if x := r.float(k, 0); r.err == nil && !unit(x, true) {
				r.fail(k, p[k], "a value in [0, 1]")
			}
		case "sensitive":
			if x := r.float(k, 1); r.err == nil && !unit(x, false) {
				r.fail(k, p[k], "a value in (0, 1]")
			}
		case "t_r":
			for _, x := range r.floats(k) {
				if r.err == nil && !unit(x, true) {
					r.fail(k, p[k], "values in [0, 1]")
				}
			}
		case "k":
			if x := r.int(k); r.err == nil && x < 1 {
				r.fail(k, p[k], "an integer ≥ 1")
			}
		case "rank":
			if x := r.int(k); r.err == nil && x < 0 {
				r.fail(k, p[k], "an integer ≥ 0")
			}
		case "exclude_input":
			r.bool(k)
		case "mapping", "score", "strategy":
			allowed := map[string][]string{"mapping": {"aggressive", "balanced", "conservative"}, "score": {"euclidean", "cosine"}, "strategy": {"token", "record", "dataset"}}[k]
			if x := r.string(k); r.err == nil && !slices.Contains(allowed, x) {
				r.fail(k, p[k], strings.Join(allowed, " | "))
			}
		}
	}
	return r.err
}
