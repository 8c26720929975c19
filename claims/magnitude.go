package claims

import (
	"fmt"
	"math"
	"strings"
)

// Magnitude verdicts: xp's value against the published one, within the
// claim's band or not.
const (
	SameSize = "same size"
	Differs  = "differs"
)

// DefaultBand is the range of xp ÷ published that reads "same size"
// unless a claim gives its own.
var DefaultBand = [2]float64{0.5, 2}

// Magnitude is xp's values set beside the published ones.
type Magnitude struct {
	// Verdict is SameSize when every published value is met within the
	// band, Differs when one is not, "" when the claim publishes none
	// (or none was run).
	Verdict string
	// Text is each comparison: "×0.53 [0.49, 0.57]" (ratio), "+1.2
	// [+0.8, +1.6]" (difference) or "≥ 3e+06: ×0.0014" (a bound).
	Text string
}

// published pairs each published value with xp's value there: the
// claim's list with its first group's points (or with the derived value),
// then the points that carry their own.
func published(c *Claim, values [][]Estimate, derived *Estimate) (pubs []Published, xs []Estimate) {
	gs := c.groups()
	for i, p := range c.Published {
		switch {
		case derived != nil:
			pubs, xs = append(pubs, p), append(xs, *derived)
		case len(values) > 0 && i < len(values[0]):
			pubs, xs = append(pubs, p), append(xs, values[0][i])
		}
	}
	for g := range values {
		for i, p := range gs[g] {
			if p.Pub != nil && i < len(values[g]) {
				pubs, xs = append(pubs, *p.Pub), append(xs, values[g][i])
			}
		}
	}
	return pubs, xs
}

// magnitude sets xp's values beside the published ones.
func magnitude(c *Claim, values [][]Estimate, derived *Estimate) Magnitude {
	band := DefaultBand
	if len(c.Band) == 2 {
		band = [2]float64{c.Band[0], c.Band[1]}
	}
	var m Magnitude
	var parts []string
	pubs, xs := published(c, values, derived)
	for i, p := range pubs {
		if !p.Set || !xs[i].Found {
			continue
		}
		x := xs[i]
		if infinite(x) && c.Cap > 0 {
			// A capped search's ∞ is at least the cap, no more: ×∞ would
			// claim more than the records know.
			same, known, text := cappedMagnitude(c.Cap, p, band)
			parts = append(parts, text)
			switch {
			case known && !same:
				m.Verdict = Differs
			case known && m.Verdict == "":
				m.Verdict = SameSize
			}
			continue
		}
		same, text := compareMagnitude(x, p, c.Magnitude == "difference", band)
		parts = append(parts, text)
		switch {
		case !same:
			m.Verdict = Differs
		case m.Verdict == "":
			m.Verdict = SameSize
		}
	}
	m.Text = strings.Join(parts, " / ")
	return m
}

// compareMagnitude is one published value against xp's.
func compareMagnitude(x Estimate, p Published, difference bool, band [2]float64) (same bool, text string) {
	iv := func(lo, hi float64, f func(float64) string) string {
		if !x.known() || (lo == hi) {
			return ""
		}
		return " [" + f(lo) + ", " + f(hi) + "]"
	}
	ratio := func(v float64) string { return "×" + num(v) }
	signed := func(v float64) string {
		if v >= 0 {
			return "+" + num(v)
		}
		return num(v)
	}
	switch {
	case p.Bound == ">":
		if x.Mean >= p.Value {
			return true, fmt.Sprintf("above the published bound %s", p)
		}
		return false, fmt.Sprintf("%s the published bound %s", ratio(x.Mean/p.Value), p)
	case p.Bound == "<":
		if x.Mean <= p.Value {
			return true, fmt.Sprintf("below the published bound %s", p)
		}
		return false, fmt.Sprintf("%s the published bound %s", ratio(x.Mean/p.Value), p)
	case difference:
		d := x.Mean - p.Value
		return band[0] <= d && d <= band[1], signed(d) + iv(x.Lo-p.Value, x.Hi-p.Value, signed)
	case p.Value == 0:
		return x.Mean == 0, "published 0, xp " + num(x.Mean)
	}
	r := x.Mean / p.Value
	lo, hi := x.Lo/p.Value, x.Hi/p.Value
	if p.Value < 0 {
		lo, hi = hi, lo
	}
	same = band[0] <= r && r <= band[1] && !math.IsNaN(r)
	return same, ratio(r) + iv(lo, hi, ratio)
}

// cappedMagnitude is a published value against xp's value known only to
// be at least the cap: decided (known) only where that bound alone
// decides it.
func cappedMagnitude(cap float64, p Published, band [2]float64) (same, known bool, text string) {
	at := "≥ " + num(cap) + " (the cap)"
	switch {
	case p.Bound == ">":
		if cap >= p.Value {
			return true, true, at + ": above the published bound " + p.String()
		}
		return false, false, at + ": not compared with the published bound " + p.String()
	case p.Bound == "<" || p.Value <= 0:
		return false, false, at + ": not compared with " + p.String()
	}
	r := cap / p.Value
	if r > band[1] {
		return false, true, "≥ ×" + num(r) + " (the cap)"
	}
	return false, false, "≥ ×" + num(r) + " (the cap): not compared"
}
