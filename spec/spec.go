package spec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A NoiseSource names the mechanism whose noise another draws under
// common_noise: Mechanism, or, where the cell's parameters have Param,
// WithParam with that parameter carried over (Vickrey draws Laplace's
// noise, or Mahalanobis's with its λ).
type NoiseSource struct {
	Mechanism, Param, WithParam string
}

// The utility cells a stage adds (Descriptor.Utility).
const (
	UtilityApply    = "apply"
	UtilityBaseline = "baseline"
)

// Kind is what a descriptor describes.
type Kind string

const (
	Mechanism Kind = "mechanism" // a privatization mechanism (mech)
	Model     Kind = "model"     // a classifier (models)
	Analysis  Kind = "analysis"  // a privacy analysis (analysis)
	Stage     Kind = "stage"     // a computation over other cells' results, run after them (runner)
	Measure   Kind = "measure"   // opt-in measures of a utility cell's privatized splits (analysis.Split)
)

// Notion is the privacy guarantee a mechanism gives. The ε of different
// notions are not comparable: tables and plots must say which one an ε
// belongs to.
type Notion string

const (
	MetricDP Notion = "metric-dp" // ε·d_χ-privacy, d the embedding's Euclidean distance (or a norm of the noise's shape: Mahalanobis)
	// LineDP is ε·d-privacy in the distance along a line of words (the
	// number of words between two on 1-Diffractor's line), not in the
	// embedding: its ε is not comparable with MetricDP's.
	LineDP Notion = "metric-dp-line"
	SetDP  Notion = "pure-dp-set"  // pure ε-DP among the inputs that share an output set (CusText)
	NoDP   Notion = "no-guarantee" // a heuristic variant (Vickrey with input exclusion, SanText+)
)

// Type is the type of a parameter's value.
type Type int

const (
	Float   Type = iota + 1 // a finite number
	Int                     // an integer literal (1.9 and 2.0 are refused)
	Bool                    // true or false
	String                  // one of Param.Enum
	Floats                  // a list of finite numbers
	Ints                    // a list of integer literals
	Strings                 // a list of non-empty strings (one of Enum each, when Enum is set)
)

func (t Type) String() string {
	return [...]string{"?", "number", "integer", "bool", "string", "list of numbers", "list of integers", "list of strings"}[min(int(t), 7)]
}

// Bound is one end of a numeric range.
type Bound struct {
	Value float64
	Open  bool // the end itself is excluded
}

// Incl and Excl are inclusive and exclusive bounds.
func Incl(v float64) *Bound { return &Bound{Value: v} }
func Excl(v float64) *Bound { return &Bound{Value: v, Open: true} }

// Param is one typed parameter.
type Param struct {
	Name string
	Type Type
	Doc  string
	// Default is the value when the parameter is absent (of Type's Go
	// type: float64, int, bool, string, []float64, []int or []string);
	// nil means that
	// absence switches the feature off, as Doc says.
	Default any
	// Min and Max bound Float and Int values and each element of Floats
	// and Ints (nil: unbounded, but always finite).
	Min, Max *Bound
	Enum     []string // allowed values of a String (and of each element of Strings, when set)
	MinLen   int      // fewest elements of a list
	Grid     bool     // a config may sweep it (mechanisms.N.grid)
	// Dataset lists the values of a String that make the descriptor read
	// a dataset (an analysis sampling words from the dataset).
	Dataset []string
	// Required: the parameter has no default and must be given.
	Required bool
	// DefaultText says what absence means where Default is nil and the
	// consumer decides from other parameters (shown instead of "off").
	DefaultText string
}

// Descriptor describes one mechanism, model kind or analysis kind.
type Descriptor struct {
	Kind Kind
	Name string
	Doc  string // one line
	// Notion is the guarantee of a mechanism ("" for models and analyses).
	Notion Notion
	// Unguarded names a Bool parameter that, when true, leaves the
	// mechanism without a guarantee (its Notion becomes NoDP).
	Unguarded string
	// Epsilon: the kind takes ε (a finite value > 0); Dataset: it reads a
	// dataset. Analyses of an embedding's geometry need neither.
	Epsilon, Dataset bool
	// Pieces, for a model, says that it reads its own tokenizer's pieces
	// of each (privatized) text, from the checkpoint its parameter
	// checkpoint names, instead of word ids over the task's vocabulary
	// and the embedding's vectors.
	Pieces bool
	Params []Param
	// Exclusive lists groups of parameters of which at most one may be
	// given (variants of one mechanism).
	Exclusive [][]string
	// Requires lists parameter values that hold only with another
	// parameter's value (checked on the resolved values, defaults
	// included).
	Requires []Requirement
	// Mechanisms, for an analysis, are the only mechanisms it measures
	// (nil: any), and MechanismsWhy says why ("measures CusText's output
	// sets"): the config validator refuses others with that reason.
	Mechanisms    []string
	MechanismsWhy string
	// Reads, for a stage, is the analysis whose records it needs ("":
	// any analysis with ε), and ReadsWhy says why ("maximizes E_M").
	Reads, ReadsWhy string
	// Utility, for a stage, is the utility cells it adds to its analysis
	// run (trained classifiers, so the config needs a task: a dataset,
	// vectors, a model): UtilityApply, the baseline and the mechanism
	// cells of its apply parameter's modes; UtilityBaseline, the
	// baseline alone (the stage runs its own at an ε it finds); ""
	// none. Pairs: it pairs mechanism cells with utility cells, so its
	// analysis must take a mechanism. Searches: it searches ε between
	// its parameters lo and hi.
	Utility         string
	Pairs, Searches bool
	// Noise, for a mechanism, is the mechanism whose noise its cells
	// draw under common_noise (nil: its own).
	Noise *NoiseSource
	// Figures, for an analysis or stage, are the statistics results plots
	// against ε (one panel each, one line per mechanism setting);
	// Tradeoffs the (x, y) pairs of statistics plotted one against the
	// other; Histograms the per-word series drawn as histograms over the
	// words at each ε; ByRank, statistics named "d<k> p<q>" (the k-th
	// neighbour's distance, percentile q over the words) drawn against
	// k, one line per percentile, and tabled k by percentile. An analysis
	// with none of them is in tables only (report.Undrawn).
	Figures    []string
	Tradeoffs  [][2]string
	Histograms []string
	ByRank     bool
	// Revision counts changes to how an analysis computes its numbers; it
	// is part of the analysis cells' keys, so a change made after records
	// exist is not answered from them (bump it with such a change).
	Revision int
}

// Requirement: Param = Value needs Needs = NeedsValue.
type Requirement struct {
	Param, Value      string
	Needs, NeedsValue string
}

func (r Requirement) String() string {
	return fmt.Sprintf("%s = %s needs %s = %s", r.Param, r.Value, r.Needs, r.NeedsValue)
}

// ReadsDataset reports whether the descriptor, with resolved parameters
// v, reads a dataset.
func (d *Descriptor) ReadsDataset(v Values) bool {
	if d.Dataset {
		return true
	}
	for _, p := range d.Params {
		if slices.Contains(p.Dataset, v.String(p.Name)) {
			return true
		}
	}
	return false
}

// Param returns the named parameter.
func (d *Descriptor) Param(name string) (Param, bool) {
	i := slices.IndexFunc(d.Params, func(p Param) bool { return p.Name == name })
	if i < 0 {
		return Param{}, false
	}
	return d.Params[i], true
}

// NotionOf is the guarantee of the mechanism with resolved parameters v.
func (d *Descriptor) NotionOf(v Values) Notion {
	if d.Unguarded != "" && v.Bool(d.Unguarded) {
		return NoDP
	}
	return d.Notion
}

// Error is a refused ε or parameter. Param is "" for ε and for errors of
// the whole parameter set (exclusive groups).
type Error struct {
	Desc  string // the descriptor's name
	Param string
	Msg   string
}

func (e *Error) Error() string { return e.Desc + ": " + e.Msg }

// CheckEpsilon is the rule for ε wherever a kind takes one: a finite
// value > 0.
func CheckEpsilon(name string, eps float64) error {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return &Error{Desc: name, Msg: fmt.Sprintf("ε = %v, want a finite value > 0", eps)}
	}
	return nil
}

// Resolve checks raw parameters (as a config or a flag gives them: any
// Go integer or float type, bool, string, or a list) against d — known
// names, types, ranges, exclusive groups — and returns them normalised
// (float64, int, bool, string, []float64) with defaults filled in.
// Parameters are checked in name order, so the first error is stable.
func (d *Descriptor) Resolve(raw map[string]any) (Values, error) {
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	slices.Sort(names)
	out := Values{}
	for _, k := range names {
		p, ok := d.Param(k)
		if !ok {
			return nil, &Error{Desc: d.Name, Param: k, Msg: fmt.Sprintf("unknown parameter %q (%s)", k, d.known())}
		}
		v, err := p.Normalize(raw[k])
		if err != nil {
			return nil, &Error{Desc: d.Name, Param: k, Msg: fmt.Sprintf("parameter %s = %s, want %s", k, show(raw[k]), err.Error())}
		}
		out[k] = v
	}
	for _, group := range d.Exclusive {
		var given []string
		for _, k := range group {
			if _, ok := raw[k]; ok {
				given = append(given, k)
			}
		}
		if len(given) > 1 {
			return nil, &Error{Desc: d.Name, Param: given[1], Msg: fmt.Sprintf("%s are different variants: give at most one", strings.Join(given, " and "))}
		}
	}
	for _, p := range d.Params {
		if _, ok := out[p.Name]; !ok {
			if p.Required {
				return nil, &Error{Desc: d.Name, Param: p.Name, Msg: fmt.Sprintf("parameter %s is required (%s)", p.Name, p.Doc)}
			}
			if p.Default != nil {
				out[p.Name] = cloneDefault(p.Default)
			}
		}
	}
	for _, r := range d.Requires {
		if out.String(r.Param) == r.Value && out.String(r.Needs) != r.NeedsValue {
			return nil, &Error{Desc: d.Name, Param: r.Param, Msg: fmt.Sprintf("parameter %s (%s = %s here)", r, r.Needs, show(out[r.Needs]))}
		}
	}
	return out, nil
}

// cloneDefault copies a list default so that no caller can change the
// descriptor through resolved values.
func cloneDefault(v any) any {
	switch l := v.(type) {
	case []float64:
		return slices.Clone(l)
	case []int:
		return slices.Clone(l)
	case []string:
		return slices.Clone(l)
	}
	return v
}

func (d *Descriptor) known() string {
	if len(d.Params) == 0 {
		return d.Name + " takes no parameters"
	}
	var n []string
	for _, p := range d.Params {
		n = append(n, p.Name)
	}
	slices.Sort(n)
	return "known: " + strings.Join(n, ", ")
}

func show(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = show(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("%v", v)
}

// Normalize converts one raw value to the parameter's Go type and checks
// its range; the error says what is wanted.
func (p Param) Normalize(v any) (any, error) {
	switch p.Type {
	case Float:
		x, ok := toFloat(v)
		if !ok || !p.inRange(x) {
			return nil, fmt.Errorf("%s", p.Want())
		}
		return x, nil
	case Int:
		x, ok := toInt(v)
		if ok && (x > MaxInt || x < -MaxInt) {
			return nil, fmt.Errorf("an integer of at most %d in size", MaxInt)
		}
		if !ok || !p.inRange(float64(x)) {
			return nil, fmt.Errorf("%s", p.Want())
		}
		return x, nil
	case Bool:
		x, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%s", p.Want())
		}
		return x, nil
	case String:
		x, ok := v.(string)
		if !ok || (len(p.Enum) > 0 && !slices.Contains(p.Enum, x)) || (len(p.Enum) == 0 && (x == "" || len(x) > 4096)) {
			return nil, fmt.Errorf("%s", p.Want())
		}
		return x, nil
	case Floats:
		return listOf(p, v, toFloat, p.inRange)
	case Ints:
		return listOf(p, v, toInt, func(x int) bool { return x <= MaxInt && x >= -MaxInt && p.inRange(float64(x)) })
	case Strings:
		str := func(e any) (string, bool) { x, ok := e.(string); return x, ok }
		return listOf(p, v, str, func(x string) bool { return x != "" && (len(p.Enum) == 0 || slices.Contains(p.Enum, x)) })
	}
	return nil, fmt.Errorf("parameter %s has no type", p.Name)
}

// listOf normalizes a list parameter: a []T as is, or a YAML list whose
// elements conv accepts, with at least MinLen elements, each one ok.
func listOf[T any](p Param, v any, conv func(any) (T, bool), ok func(T) bool) (any, error) {
	var list []T
	switch l := v.(type) {
	case []T:
		list = slices.Clone(l)
	case []any:
		for _, e := range l {
			x, good := conv(e)
			if !good {
				return nil, fmt.Errorf("%s", p.Want())
			}
			list = append(list, x)
		}
	default:
		return nil, fmt.Errorf("%s", p.Want())
	}
	if len(list) < p.MinLen || slices.ContainsFunc(list, func(x T) bool { return !ok(x) }) {
		return nil, fmt.Errorf("%s", p.Want())
	}
	return list, nil
}

// Want describes the values the parameter accepts, e.g. "a number in [0, 1]".
func (p Param) Want() string {
	switch p.Type {
	case Bool:
		return "true or false"
	case String:
		if len(p.Enum) == 0 {
			return "a word or path, not empty"
		}
		return "one of " + strings.Join(p.Enum, ", ")
	case Strings:
		s := "a list of words"
		if p.MinLen > 0 {
			s = fmt.Sprintf("a list of at least %d words", p.MinLen)
		}
		if len(p.Enum) > 0 {
			s += " among " + strings.Join(p.Enum, ", ")
		}
		return s
	case Floats, Ints:
		what := map[Type]string{Floats: "numbers", Ints: "integers"}[p.Type]
		s := "a list of " + what
		if p.MinLen > 1 {
			s = fmt.Sprintf("a list of at least %d %s", p.MinLen, what)
		}
		if r := p.Range(); r != "" {
			s += " in " + r
		}
		return s
	}
	s := "a number"
	if p.Type == Int {
		s = "an integer"
	}
	if r := p.Range(); r != "" {
		s += " in " + r
	}
	return s
}

// Range writes the allowed interval ("[0, 1]", "(0, ∞)"), "" when unbounded.
func (p Param) Range() string {
	if p.Min == nil && p.Max == nil {
		return ""
	}
	lo, hi := "(−∞", "∞)"
	if p.Min != nil {
		lo = "[" + num(p.Min.Value)
		if p.Min.Open {
			lo = "(" + num(p.Min.Value)
		}
	}
	if p.Max != nil {
		hi = num(p.Max.Value) + "]"
		if p.Max.Open {
			hi = num(p.Max.Value) + ")"
		}
	}
	return lo + ", " + hi
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// MaxInt is the largest integer any parameter takes, whatever its own
// range: counts (draws, samples, words) beyond it would overflow the
// products xp plans with, and no study needs them.
const MaxInt = 1<<31 - 1

func (p Param) inRange(x float64) bool {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return false
	}
	if b := p.Min; b != nil && (x < b.Value || (b.Open && x == b.Value)) {
		return false
	}
	if b := p.Max; b != nil && (x > b.Value || (b.Open && x == b.Value)) {
		return false
	}
	return true
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	if i, ok := toInt(v); ok {
		return float64(i), true
	}
	return 0, false
}

// toInt accepts Go integers only: a float, even 2.0, is not an integer
// literal (YAML decodes "2.0" as a float).
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case int32:
		return int(x), true
	case uint64:
		return int(x), x <= math.MaxInt64
	case uint:
		return int(x), uint64(x) <= math.MaxInt64
	}
	return 0, false
}

// Values are resolved parameters: normalised and with defaults filled.
type Values map[string]any

// Float, Int, Bool, String and Floats read a resolved value (the zero
// value when absent).
func (v Values) Float(k string) float64 { x, _ := v[k].(float64); return x }
func (v Values) Int(k string) int       { x, _ := v[k].(int); return x }
func (v Values) Bool(k string) bool     { x, _ := v[k].(bool); return x }
func (v Values) String(k string) string { x, _ := v[k].(string); return x }
func (v Values) Floats(k string) []float64 {
	x, _ := v[k].([]float64)
	return x
}
func (v Values) Ints(k string) []int {
	x, _ := v[k].([]int)
	return x
}
func (v Values) Strings(k string) []string {
	x, _ := v[k].([]string)
	return x
}

// Has reports whether k has a value (given, or by default).
func (v Values) Has(k string) bool { _, ok := v[k]; return ok }
