package metrics

import (
	"encoding/json"
	"math"
	"strconv"
)

// Analysis is what an analysis cell computes: summary statistics in the
// analysis's order, per-word series (for histograms), example outputs,
// and how the numbers were obtained.
type Analysis struct {
	Stats []Stat `json:"stats"`
	// Words index every series: Series[name][i] belongs to Words[i].
	Words  []string         `json:"words,omitempty"`
	Series map[string][]Num `json:"series,omitempty"`
	// Examples are each word's outputs, most frequent first ("word ×n").
	Examples map[string][]string `json:"examples,omitempty"`
	// Method says how: exact (from the output distribution) or sampled.
	Method string `json:"method"`
	// Lookups are the tokens privatized or neighbour searches this
	// execution made: fewer where a memo held draws made before, so it
	// is a property of the execution, not of the result, and is not
	// recorded with it (the record's provenance keeps it as work_units,
	// beside the wall time it prices).
	Lookups int64    `json:"-"`
	Notes   []string `json:"notes,omitempty"`
	// Flags are short warnings that the result did not do what was asked
	// of it (a search that did not reach its target or stopped at its
	// range's end, an attack no better than copying): shown in the
	// tables' flags column, long.csv and the page, not only in the notes.
	Flags []string `json:"flags,omitempty"`
}

// Flag appends a warning (see Flags), once.
func (a *Analysis) Flag(f string) {
	for _, x := range a.Flags {
		if x == f {
			return
		}
	}
	a.Flags = append(a.Flags, f)
}

// Stat is one named statistic, with a confidence interval where it is
// estimated (Lo = Hi = 0: none). Simulated marks a value an otherwise
// exact analysis estimated by simulation (a query attack's N), Lo and Hi
// the range that simulation leaves open.
type Stat struct {
	Name      string `json:"name"`
	Value     Num    `json:"value"`
	Lo        Num    `json:"lo,omitempty"`
	Hi        Num    `json:"hi,omitempty"`
	Simulated bool   `json:"simulated,omitempty"`
	// Quantized marks a value a search stopped at (an ε found by
	// bisection): Lo and Hi are the bracket the search left open, within
	// which the exact answer lies.
	Quantized bool `json:"quantized,omitempty"`
}

// Add appends a statistic.
func (a *Analysis) Add(name string, v float64) {
	a.Stats = append(a.Stats, Stat{Name: name, Value: Num(v)})
}

// AddCI appends a statistic with its confidence interval.
func (a *Analysis) AddCI(name string, v, lo, hi float64) {
	a.Stats = append(a.Stats, Stat{Name: name, Value: Num(v), Lo: Num(lo), Hi: Num(hi)})
}

// AddBracket appends a value a search stopped at, with the bracket
// [lo, hi] it left open (see Stat.Quantized).
func (a *Analysis) AddBracket(name string, v, lo, hi float64) {
	a.Stats = append(a.Stats, Stat{Name: name, Value: Num(v), Lo: Num(lo), Hi: Num(hi), Quantized: true})
}

// AddSimulated appends a statistic estimated by simulation within an
// exact analysis, with the range [lo, hi] the simulation leaves open.
func (a *Analysis) AddSimulated(name string, v, lo, hi float64) {
	a.Stats = append(a.Stats, Stat{Name: name, Value: Num(v), Lo: Num(lo), Hi: Num(hi), Simulated: true})
}

// Stat returns the named statistic (NaN when absent).
func (a *Analysis) Stat(name string) float64 {
	for _, s := range a.Stats {
		if s.Name == name {
			return float64(s.Value)
		}
	}
	return math.NaN()
}

// Num is a number that may be infinite (a query attack that never
// succeeds) or undefined: JSON has no such numbers, so they are written
// as the strings "inf", "-inf" and "nan".
type Num float64

// MarshalJSON writes finite values as numbers.
func (n Num) MarshalJSON() ([]byte, error) {
	x := float64(n)
	switch {
	case math.IsInf(x, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-inf"`), nil
	case math.IsNaN(x):
		return []byte(`"nan"`), nil
	}
	return strconv.AppendFloat(nil, x, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (n *Num) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		switch s {
		case "inf":
			*n = Num(math.Inf(1))
		case "-inf":
			*n = Num(math.Inf(-1))
		default:
			*n = Num(math.NaN())
		}
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*n = Num(x)
	return nil
}
