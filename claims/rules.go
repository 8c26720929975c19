package claims

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/stats"
)

// Verdicts.
const (
	Holds     = "holds"
	Fails     = "does not hold"
	Unsettled = "unsettled"
	NotRun    = "not run here"
	// NeedsCheckpoint is the verdict of a claim whose run fine-tunes a
	// pretrained checkpoint (model kind transformer) and has no records:
	// the checkpoint is the user's to bring (xp never downloads
	// weights), and the biLSTM variant beside it is not the paper's
	// setup.
	NeedsCheckpoint = "needs the checkpoint"
)

// A Rule decides a claim from the values at its points. Name is what a
// claim names it by (its rule:), Doc says what it tests (the tables print
// it); check refuses a claim the rule cannot read; decide returns the
// decision.
type Rule struct {
	Name string
	Doc  string
	// params are the claim keys the rule reads beyond its points (a
	// claim that gives another is refused: it belongs to another rule).
	params []string
	valid  func(c *Claim) error
	decide func(c *Claim, gs []group, r reader) decision
	// derived: the rule computes one value of its own from the points
	// (shown, and set beside the one published value).
	derived bool
}

// group is one group of points with xp's values there.
type group struct {
	points []Point
	values []Estimate
}

// reader reads values the rule needs beyond its points' (a curve over
// every ε of a setting).
type reader interface {
	// curve is the statistic at every ε the point's setting has, in
	// increasing ε.
	curve(p Point, stat string) (eps []float64, values []Estimate)
}

// decision is a rule's verdict, why (for any verdict but holds), what
// it found (range, largest gain), and a value of its own (derived rules).
type decision struct {
	verdict, reason, detail string
	value                   *Estimate
}

// rules are the rules a claim can name, one value each (ruleOf).
var rules = []Rule{
	{Name: "greater", params: nil, Doc: "the first point's value is above the second's", valid: points(2, 2),
		decide: each(func(c *Claim, g group) []step { return []step{above(g, 0, 1)} })},
	{Name: "far-greater", params: []string{"factor"}, Doc: "the first point's value is at least factor times the second's (a value recorded as ∞ read as at least the cap)", decide: each(farGreater),
		valid: func(c *Claim) error {
			if c.Factor <= 1 {
				return errors.New("rule far-greater needs factor > 1")
			}
			return points(2, 2)(c)
		}},
	{Name: "matched-far-greater", params: []string{"by", "factor"}, Doc: "at each ε of the first setting, its value is at least factor times the second setting's at equal privacy (by): the second's value anywhere between its two grid ε whose privacy brackets the first's", decide: matchedFarGreater, derived: true,
		valid: func(c *Claim) error {
			switch {
			case c.By == "":
				return errors.New("rule matched-far-greater needs by: the privacy statistic matched")
			case c.Factor <= 1:
				return errors.New("rule matched-far-greater needs factor > 1")
			case len(c.Epsilons) > 0:
				return errors.New("rule matched-far-greater reads every ε of its settings: give no epsilons")
			}
			return points(2, 2)(c)
		}},
	{Name: "matched-greater", params: []string{"by"}, Doc: "at each ε of the first setting, its value is above the second setting's at equal privacy (by): the second's value anywhere between its two grid ε whose privacy brackets the first's", derived: true,
		decide: func(c *Claim, gs []group, r reader) decision {
			above := *c
			above.Factor = 1 // matched-far-greater by a factor of 1: the first's interval above the second's
			return matchedFarGreater(&above, gs, r)
		},
		valid: func(c *Claim) error {
			switch {
			case c.By == "":
				return errors.New("rule matched-greater needs by: the privacy statistic matched")
			case c.Factor != 0:
				return errors.New("rule matched-greater takes no factor (matched-far-greater does)")
			case len(c.Epsilons) > 0:
				return errors.New("rule matched-greater reads every ε of its settings: give no epsilons")
			}
			return points(2, 2)(c)
		}},
	{Name: "greatest", params: nil, Doc: "the first point's value is above every other point's", valid: points(2, 0),
		decide: each(func(c *Claim, g group) (s []step) {
			for i := 1; i < len(g.values); i++ {
				s = append(s, above(g, 0, i))
			}
			return s
		})},
	{Name: "least", params: nil, Doc: "the first point's value is below every other point's", valid: points(2, 0),
		decide: each(func(c *Claim, g group) (s []step) {
			for i := 1; i < len(g.values); i++ {
				s = append(s, above(g, i, 0))
			}
			return s
		})},
	{Name: "increasing", params: nil, Doc: "each point's value is above the one before", valid: points(2, 0),
		decide: each(func(c *Claim, g group) (s []step) {
			for i := 1; i < len(g.values); i++ {
				s = append(s, above(g, i, i-1))
			}
			return s
		})},
	{Name: "decreasing", params: nil, Doc: "each point's value is below the one before", valid: points(2, 0),
		decide: each(func(c *Claim, g group) (s []step) {
			for i := 1; i < len(g.values); i++ {
				s = append(s, above(g, i-1, i))
			}
			return s
		})},
	{Name: "at-most", params: []string{"threshold"}, Doc: "every point's value is at most the threshold", valid: points(1, 0),
		decide: each(func(c *Claim, g group) (s []step) {
			for i := range g.values {
				s = append(s, bound(c, g, i, true))
			}
			return s
		})},
	{Name: "at-least", params: []string{"threshold"}, Doc: "every point's value is at least the threshold", valid: points(1, 0),
		decide: each(func(c *Claim, g group) (s []step) {
			for i := range g.values {
				s = append(s, bound(c, g, i, false))
			}
			return s
		})},
	{Name: "dominates", params: []string{"margin"}, Doc: "each value settled at least the one before at every ε, and above it at one ε at least", valid: points(2, 0), decide: dominates},
	{Name: "range", params: []string{"threshold", "min", "identity"}, Doc: "at least the threshold at min ε of the grid or more, an ε where the mechanism is nearly the identity not counted", decide: rangeRule,
		valid: func(c *Claim) error {
			if err := points(1, 1)(c); err != nil {
				return err
			}
			if c.Min < 1 || len(c.Epsilons) == 0 {
				return errors.New("rule range needs epsilons and min ≥ 1")
			}
			return nil
		}},
	{Name: "within-factor", params: []string{"factor"}, Doc: "the largest value is at most factor times the smallest", decide: withinFactor,
		valid: func(c *Claim) error {
			if c.Factor <= 1 {
				return errors.New("rule within-factor needs factor > 1")
			}
			return points(2, 0)(c)
		}},
	{Name: "flattens", params: []string{"after", "fraction"}, Doc: "every step after the after-th point at most fraction × the first step", decide: flattens,
		valid: func(c *Claim) error {
			if c.After < 2 || c.Fraction <= 0 {
				return errors.New("rule flattens needs after ≥ 2 and fraction > 0")
			}
			return points(c.After+1, 0)(c)
		}},
	{Name: "matched-gain", params: []string{"by", "by_run", "by_analysis", "margin", "threshold"}, Doc: "the largest relative reduction of the loss against the first setting's, at equal privacy (by, read from by_run's by_analysis rows where given, paired by seed), is at least the threshold (above 0 where none is given); the first setting's loss at the matched privacy lies anywhere between its two grid ε around it, and is not read where it is within the margin of 0", decide: matchedGain, derived: true,
		valid: func(c *Claim) error {
			if c.By == "" {
				return errors.New("rule matched-gain needs by: the privacy statistic matched")
			}
			if c.Published != nil && len(c.Published) != 1 {
				return errors.New("rule matched-gain has one value: give one published value")
			}
			if len(c.Epsilons) > 0 {
				return errors.New("rule matched-gain reads every ε of its settings: give no epsilons")
			}
			return points(2, 0)(c)
		}},
}

// ruleOf is the named rule.
func ruleOf(name string) (Rule, bool) {
	i := slices.IndexFunc(rules, func(r Rule) bool { return r.Name == name })
	if i < 0 {
		return Rule{}, false
	}
	return rules[i], true
}

// ruleParams are the claim keys some rule reads, with whether a claim
// gives each (a zero is not given).
func (c *Claim) ruleParams() map[string]bool {
	return map[string]bool{"threshold": c.Threshold != 0, "min": c.Min != 0, "identity": c.Identity != 0, "margin": c.Margin != 0,
		"factor": c.Factor != 0, "after": c.After != 0, "fraction": c.Fraction != 0, "by": c.By != "", "by_run": c.ByRun != "", "by_analysis": c.ByAnalysis != ""}
}

// checkParams refuses a claim that gives a key its rule does not read,
// naming the rules that do.
func (r Rule) checkParams(c *Claim) error {
	given := c.ruleParams()
	for _, k := range slices.Sorted(maps.Keys(given)) {
		if !given[k] || slices.Contains(r.params, k) {
			continue
		}
		var owners []string
		for _, o := range rules {
			if slices.Contains(o.params, k) {
				owners = append(owners, o.Name)
			}
		}
		return fmt.Errorf("%s is read by rule %s, not by %s", k, strings.Join(owners, ", "), r.Name)
	}
	return nil
}

// rule is the claim's rule (Read refuses a claim whose rule is unknown).
func (c *Claim) rule() Rule {
	r, _ := ruleOf(c.Rule)
	return r
}

// ruleNames are the rules a claim can name, sorted.
func ruleNames() []string {
	var n []string
	for _, r := range rules {
		n = append(n, r.Name)
	}
	slices.Sort(n)
	return n
}

func (r Rule) check(c *Claim) error {
	if err := r.checkParams(c); err != nil {
		return err
	}
	if r.valid != nil {
		if err := r.valid(c); err != nil {
			return err
		}
	}
	if !r.derived && c.Published != nil && len(c.Published) != len(c.groups()[0]) {
		return fmt.Errorf("%d published values for %d points", len(c.Published), len(c.groups()[0]))
	}
	return nil
}

// points checks every group's size (most 0: no limit).
func points(least, most int) func(c *Claim) error {
	return func(c *Claim) error {
		for _, g := range c.groups() {
			if len(g) < least || (most > 0 && len(g) > most) {
				if least == most {
					return fmt.Errorf("rule %s reads %d points a group, not %d", c.Rule, least, len(g))
				}
				return fmt.Errorf("rule %s needs at least %d points a group (not %d)", c.Rule, least, len(g))
			}
		}
		return nil
	}
}

// step is one comparison of a rule with what it compared.
type step struct{ verdict, what string }

// each decides every group by its steps: the claim holds when every step
// holds, does not when any does not, and is unsettled otherwise.
func each(steps func(c *Claim, g group) []step) func(c *Claim, gs []group, _ reader) decision {
	return func(c *Claim, gs []group, _ reader) decision {
		var all []step
		for _, g := range gs {
			all = append(all, steps(c, g)...)
		}
		return combine(all, "")
	}
}

func combine(all []step, detail string) decision {
	d := decision{verdict: Holds, detail: detail}
	for _, s := range all {
		switch {
		case s.verdict == Fails:
			d.verdict = Fails
		case s.verdict == Unsettled && d.verdict == Holds:
			d.verdict = Unsettled
		}
	}
	if d.verdict != Holds {
		var where []string
		for _, s := range all {
			if s.verdict == d.verdict {
				where = append(where, s.what)
			}
		}
		d.reason = d.verdict + " at " + strings.Join(where, "; ")
	}
	return d
}

// Outcomes of comparing two values.
const (
	cmpAbove   = iota // x above y, settled
	cmpBelow          // x below y, settled
	cmpEqual          // exactly equal (exact values, or every seed's difference 0)
	cmpOverlap        // not settled
)

// compare settles x against y: by the 95% t-interval of their per-seed
// differences where both have values on at least two common seeds
// (paired: seeds are independent replications, and a seed samples the
// same words for every setting of an analysis), otherwise by their
// intervals.
func compare(x, y Estimate) int { return compareWithin(x, y, 0) }

// compareWithin is compare with a margin: a difference whose interval
// lies within ±margin is a tie (cmpEqual), and x is above (below) y only
// when the difference's interval lies above margin (below −margin).
func compareWithin(x, y Estimate, margin float64) int {
	var diffs []float64
	if x.Basis == BasisBracket || y.Basis == BasisBracket {
		// A search's result is known to its bracket only: per-seed
		// differences of the values it stopped at would claim more.
		x.bySeed = nil
	}
	for s, v := range x.bySeed {
		if w, in := y.bySeed[s]; in {
			diffs = append(diffs, v-w)
		}
	}
	if len(diffs) >= 2 {
		slices.Sort(diffs) // summation order independent of map order
		if diffs[0] == 0 && diffs[len(diffs)-1] == 0 {
			return cmpEqual
		}
		m, _, ci := stats.MeanCI(diffs)
		return settle(m-ci, m+ci, margin)
	}
	if !x.known() || !y.known() {
		return cmpOverlap
	}
	if x.Lo == x.Hi && y.Lo == y.Hi && x.Lo == y.Lo {
		return cmpEqual
	}
	return settle(x.Lo-y.Hi, x.Hi-y.Lo, margin) // the differences the two intervals allow
}

// settle places an interval [lo, hi] of differences against ±margin.
func settle(lo, hi, margin float64) int {
	switch {
	case lo > margin:
		return cmpAbove
	case hi < -margin:
		return cmpBelow
	case margin > 0 && lo >= -margin && hi <= margin:
		return cmpEqual
	}
	return cmpOverlap
}

// above is the step "point i's value is above point j's".
func above(g group, i, j int) step {
	what := fmt.Sprintf("%s vs %s", g.points[i], g.points[j])
	switch compare(g.values[i], g.values[j]) {
	case cmpAbove:
		return step{Holds, what}
	case cmpOverlap:
		return step{Unsettled, what + oneSeed(g.values[i], g.values[j])}
	}
	return step{Fails, what}
}

// farGreater is the step "the first value is at least factor times the
// second": decided on the ratio's interval, a value recorded as ∞ known
// to be at least the claim's cap (and no more: ∞ there would give ×∞).
func farGreater(c *Claim, g group) []step {
	x, y := g.values[0], g.values[1]
	what := fmt.Sprintf("%s vs %s", g.points[0], g.points[1])
	if !x.known() && !infinite(x) || !y.known() && !infinite(y) {
		return []step{{Unsettled, what + oneSeed(x, y)}}
	}
	xl, xh := c.capped(x)
	yl, yh := c.capped(y)
	return []step{ratioStep(c, what, xl, xh, yl, yh)}
}

func infinite(e Estimate) bool { return math.IsInf(e.Mean, 1) || math.IsInf(e.Lo, 1) }

// capped is e's interval, a value recorded as ∞ read as at least the
// claim's cap.
func (c *Claim) capped(e Estimate) (lo, hi float64) {
	if infinite(e) {
		return c.Cap, math.Inf(1)
	}
	return e.Lo, e.Hi
}

// matchedFarGreater: at each ε of the first setting, its value against
// the second setting's at the same privacy (by), which lies anywhere
// between the second's values at its two grid ε whose privacy brackets
// the first's (the grid does not show the curve between them).
func matchedFarGreater(c *Claim, gs []group, r reader) decision {
	p, q := gs[0].points[0], gs[0].points[1]
	read := func(pt Point) map[float64][2]Estimate {
		out := map[float64][2]Estimate{}
		eps, bys := r.curve(pt, c.By)
		seps, stats := r.curve(pt, c.stat(pt))
		for i, e := range eps {
			if j := slices.Index(seps, e); j >= 0 {
				out[e] = [2]Estimate{bys[i], stats[j]}
			}
		}
		return out
	}
	mine, theirs := read(p), read(q)
	qeps := slices.Sorted(maps.Keys(theirs))
	var steps []step
	for _, e := range slices.Sorted(maps.Keys(mine)) {
		b, x := mine[e][0].Mean, mine[e][1]
		what := fmt.Sprintf("%s ε=%s (%s %s) vs %s", p.Setting, num(e), c.By, num(b), q.Setting)
		if !x.known() && !infinite(x) {
			steps = append(steps, step{Unsettled, what + oneSeed(x)})
			continue
		}
		found := false
		for k := 1; k < len(qeps); k++ {
			lo, hi := theirs[qeps[k-1]], theirs[qeps[k]]
			if !brackets(lo[0].Mean, hi[0].Mean, b) {
				continue
			}
			found = true
			l1, h1 := c.capped(lo[1])
			l2, h2 := c.capped(hi[1])
			xl, xh := c.capped(x)
			what += fmt.Sprintf(" between ε=%s and %s", num(qeps[k-1]), num(qeps[k]))
			steps = append(steps, ratioStep(c, what, xl, xh, min(l1, l2), max(h1, h2)))
			break
		}
		if !found {
			steps = append(steps, step{Unsettled, what + ": no two grid ε of the second bracket it"})
		}
	}
	if len(steps) == 0 {
		return decision{verdict: Unsettled, reason: "no ε to compare"}
	}
	return combine(steps, fmt.Sprintf("at equal %s, the second read between its two grid ε around the match", c.By))
}

// brackets reports whether v lies between a and b (either way round,
// ends included): the grid points a matched value is read between.
func brackets(a, b, v float64) bool { return !((a-v)*(b-v) > 0) }

// ratioStep decides "x at least factor times y" on the ratio's interval.
func ratioStep(c *Claim, what string, xl, xh, yl, yh float64) step {
	lo, hi := xl/yh, math.Inf(1)
	if yl > 0 {
		hi = xh / yl
	}
	ratio := "×" + num(lo) + " or more"
	if !math.IsInf(hi, 1) {
		ratio = fmt.Sprintf("×%s to ×%s", num(lo), num(hi))
	}
	what += " (" + ratio + ")"
	switch {
	case lo >= c.Factor:
		return step{Holds, what}
	case hi < c.Factor:
		return step{Fails, what}
	}
	return step{Unsettled, what}
}

func oneSeed(es ...Estimate) string {
	for _, e := range es {
		if !e.known() {
			return " (one seed of a sampled value: no interval)"
		}
	}
	return ""
}

// bound is the step "point i's value is at most (or at least) the
// threshold": decided when its interval lies on one side, the threshold
// itself on the claimed side. A worst case over sampled words that meets
// the bound says how much of the vocabulary could still miss it.
func bound(c *Claim, g group, i int, atMost bool) step {
	x := g.values[i]
	what := fmt.Sprintf("%s (%s)", g.points[i], num(x.Mean))
	if !x.known() {
		return step{Unsettled, what + oneSeed(x)}
	}
	lo, hi, bar := x.Lo, x.Hi, c.Threshold
	if !atMost {
		lo, hi, bar = -hi, -lo, -bar
	}
	switch {
	case hi <= bar:
		return step{Holds, what}
	case lo > bar:
		return step{Fails, what}
	}
	return step{Unsettled, what}
}

// dominates: along each group's chain, each setting's value is settled
// at least the previous one's at every ε (group: above it, or a tie
// within the margin) and settled above it at one ε at least; it does not
// hold where a value is settled below the previous one at some ε, or
// ties it at every ε; while one ε is neither, it is unsettled.
func dominates(c *Claim, gs []group, _ reader) decision {
	var all []step
	for j := 1; j < len(gs[0].values); j++ {
		var below, above, open []string
		for _, g := range gs {
			w := fmt.Sprintf("%s vs %s", g.points[j], g.points[j-1])
			if e := g.points[j].Epsilon; e != 0 && !strings.Contains(w, "ε") {
				w += " at ε=" + num(e)
			}
			switch compareWithin(g.values[j], g.values[j-1], c.Margin) {
			case cmpAbove:
				above = append(above, w)
			case cmpBelow:
				below = append(below, w)
			case cmpOverlap:
				open = append(open, w)
			}
		}
		switch {
		case len(below) > 0:
			all = append(all, step{Fails, strings.Join(below, "; ")})
		case len(open) > 0:
			// "at least at every ε" is not settled while one ε is open,
			// however many others are settled above.
			all = append(all, step{Unsettled, strings.Join(open, "; ") + " (not settled at least)"})
		case len(above) > 0:
			all = append(all, step{Holds, ""})
		default:
			all = append(all, step{Fails, fmt.Sprintf("%s vs %s: a tie at every ε, above at none", gs[0].points[j], gs[0].points[j-1])})
		}
	}
	return combine(all, "")
}

// rangeRule: the claim's point, read at every ε of its grid, is at least
// the threshold at min ε or more where the mechanism is not nearly the
// identity (Identity: an ε whose share of unchanged in-vocabulary tokens
// is at least that says nothing of a loss). It does not hold when too
// few ε remain possible.
func rangeRule(c *Claim, gs []group, _ reader) decision {
	var held, failed, open, ident []string
	for _, g := range gs {
		x, p := g.values[0], g.points[0]
		at := num(p.Epsilon)
		if !math.IsNaN(x.Unchanged) {
			at += fmt.Sprintf(" (%.1f%% unchanged)", 100*x.Unchanged)
		}
		if c.Identity > 0 && !math.IsNaN(x.Unchanged) && x.Unchanged >= c.Identity {
			ident = append(ident, at)
			continue
		}
		switch bound(c, g, 0, false).verdict {
		case Holds:
			held = append(held, at)
		case Fails:
			failed = append(failed, at)
		default:
			open = append(open, at)
		}
	}
	var parts []string
	for _, p := range []struct {
		name string
		eps  []string
	}{{"at least " + num(c.Threshold) + " at ε", held}, {"below it at ε", failed}, {"unsettled at ε", open},
		{fmt.Sprintf("near the identity (≥ %s%% unchanged) at ε", num(100*c.Identity)), ident}} {
		if len(p.eps) > 0 {
			parts = append(parts, p.name+" "+strings.Join(p.eps, ", "))
		}
	}
	d := decision{verdict: Unsettled, detail: strings.Join(parts, "; ")}
	switch {
	case len(held) >= c.Min:
		d.verdict = Holds
	case len(held)+len(open) < c.Min:
		d.verdict = Fails
	}
	if d.verdict != Holds {
		d.reason = fmt.Sprintf("%s: %d ε settled at or above %s and %d unsettled, where %d are needed", d.verdict, len(held), num(c.Threshold), len(open), c.Min)
	}
	return d
}

// withinFactor: in every group the largest value is at most Factor times
// the smallest (decided on the intervals: holds when even the widest
// reading is within the factor, fails when even the narrowest is not).
func withinFactor(c *Claim, gs []group, _ reader) decision {
	var all []step
	for _, g := range gs {
		what := fmt.Sprintf("%s … %s", g.points[0], g.points[len(g.points)-1])
		minHi, maxLo, minLo, maxHi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		known := true
		for _, v := range g.values {
			known = known && v.known()
			minHi, maxLo, minLo, maxHi = min(minHi, v.Hi), max(maxLo, v.Lo), min(minLo, v.Lo), max(maxHi, v.Hi)
		}
		widest, narrowest := maxHi/minLo, maxLo/minHi
		if minLo <= 0 {
			widest = math.Inf(1)
		}
		what += fmt.Sprintf(" (largest ÷ smallest between ×%s and ×%s)", num(max(1, narrowest)), num(widest))
		switch {
		case !known:
			all = append(all, step{Unsettled, what})
		case minLo > 0 && widest <= c.Factor:
			all = append(all, step{Holds, what})
		case minHi > 0 && narrowest > c.Factor:
			all = append(all, step{Fails, what})
		default:
			all = append(all, step{Unsettled, what})
		}
	}
	return combine(all, "")
}

// flattens: along the chain, each step after the After-th point is at
// most Fraction of the first step, decided per seed (each later step
// divided by the same seed's first step) by the ratios' t-interval, or on
// the means when the values are exact.
func flattens(c *Claim, gs []group, _ reader) decision {
	var all []step
	for _, g := range gs {
		v := g.values
		for j := c.After; j < len(v); j++ {
			what := fmt.Sprintf("%s → %s against %s → %s", g.points[j-1], g.points[j], g.points[0], g.points[1])
			ratios := map[uint64]float64{}
			for s, x1 := range v[0].bySeed {
				x2, ok2 := v[1].bySeed[s]
				a, oka := v[j-1].bySeed[s]
				b, okb := v[j].bySeed[s]
				if ok2 && oka && okb && x2 != x1 {
					ratios[s] = (b - a) / (x2 - x1)
				}
			}
			var lo, hi, m float64
			switch {
			case len(ratios) >= 2:
				xs := make([]float64, 0, len(ratios))
				for _, s := range slices.Sorted(maps.Keys(ratios)) {
					xs = append(xs, ratios[s])
				}
				var ci float64
				m, _, ci = stats.MeanCI(xs)
				lo, hi = m-ci, m+ci
			case v[0].Basis == BasisExact && v[1].Basis == BasisExact && v[j-1].Basis == BasisExact && v[j].Basis == BasisExact && v[1].Mean != v[0].Mean:
				m = (v[j].Mean - v[j-1].Mean) / (v[1].Mean - v[0].Mean)
				lo, hi = m, m
			default:
				all = append(all, step{Unsettled, what + " (no per-seed values)"})
				continue
			}
			what += fmt.Sprintf(" (ratio %s [%s, %s])", num(m), num(lo), num(hi))
			switch {
			case hi <= c.Fraction:
				all = append(all, step{Holds, what})
			case lo > c.Fraction:
				all = append(all, step{Fails, what})
			default:
				all = append(all, step{Unsettled, what})
			}
		}
	}
	return combine(all, "")
}

// matchedGain: per seed, along the ε curves of the first point's setting
// (the reference) and of each later one, the relative reduction of the
// loss (Stat) at equal privacy (By): at each ε of a later setting, the
// reference's loss at that setting's By is interpolated between the two
// reference ε that bracket it, and the gain is (reference − setting) /
// reference. The largest gain over settings and ε, per seed, then its
// mean and t-interval over seeds. It holds when that interval is above 0.
func matchedGain(c *Claim, gs []group, r reader) decision {
	g := gs[0]
	type curve struct{ by, loss map[uint64][]float64 } // per seed, by ε
	read := func(p Point) (eps []float64, cv curve) {
		src := p
		if c.ByRun != "" {
			src = Point{Run: c.ByRun, Analysis: c.ByAnalysis, Setting: p.Setting}
		}
		byEps, bys := r.curve(src, c.By)
		lossEps, losses := r.curve(p, c.stat(p))
		cv = curve{map[uint64][]float64{}, map[uint64][]float64{}}
		for i, e := range byEps {
			j := slices.Index(lossEps, e)
			if j < 0 {
				continue
			}
			eps = append(eps, e)
			for s, b := range bys[i].bySeed {
				l, ok := losses[j].bySeed[s]
				if !ok {
					continue
				}
				cv.by[s] = append(cv.by[s], b)
				cv.loss[s] = append(cv.loss[s], l)
			}
		}
		return eps, cv
	}
	refEps, ref := read(g.points[0])
	best := map[uint64]float64{}
	// The gain's range where the reference's loss is anywhere between its
	// two grid points around the match (linear interpolation is one
	// guess of a curve the grid does not show).
	bestLo, bestHi := map[uint64]float64{}, map[uint64]float64{}
	where := map[uint64]string{}
	for _, p := range g.points[1:] {
		eps, cv := read(p)
		for s, bys := range cv.by {
			rb, rl := ref.by[s], ref.loss[s]
			if len(rb) != len(refEps) || len(bys) != len(eps) {
				continue // a seed missing some ε
			}
			for i, b := range bys {
				for k := 1; k < len(rb); k++ {
					if !brackets(rb[k-1], rb[k], b) || rb[k-1] == rb[k] {
						continue
					}
					f := (b - rb[k-1]) / (rb[k] - rb[k-1])
					refLoss := rl[k-1] + f*(rl[k]-rl[k-1])
					if refLoss <= c.Margin {
						break // a relative reduction of a loss within the margin of 0 measures noise
					}
					gain := (refLoss - cv.loss[s][i]) / refLoss
					if v, ok := best[s]; !ok || gain > v {
						best[s] = gain
						where[s] = fmt.Sprintf("%s at ε %s (%s %s)", p, num(eps[i]), c.By, num(b))
						lo, hi := gain, gain
						for _, l := range []float64{rl[k-1], rl[k]} {
							if l > c.Margin {
								g := (l - cv.loss[s][i]) / l
								lo, hi = min(lo, g), max(hi, g)
							}
						}
						bestLo[s], bestHi[s] = lo, hi
					}
					break
				}
			}
		}
	}
	if len(best) == 0 {
		return decision{verdict: Unsettled, reason: "no ε of a later setting has a privacy value within the reference's range where the reference's loss is above the margin"}
	}
	seeds := slices.Sorted(maps.Keys(best))
	xs := make([]float64, len(seeds))
	los, his := make([]float64, len(seeds)), make([]float64, len(seeds))
	for i, s := range seeds {
		xs[i], los[i], his[i] = best[s], bestLo[s], bestHi[s]
	}
	m, _, ci := stats.MeanCI(xs)
	e := Estimate{Seeds: len(xs), Found: true, Unchanged: math.NaN(), bySeed: best}.withT(m, ci)
	if e.known() {
		mlo, _, _ := stats.MeanCI(los)
		mhi, _, _ := stats.MeanCI(his)
		e.Lo, e.Hi, e.Basis = min(e.Lo, mlo), max(e.Hi, mhi), BasisInterp
	}
	e.Note = "on seed " + fmt.Sprint(seeds[0]) + " at " + where[seeds[0]]
	d := decision{value: &e, detail: fmt.Sprintf("the largest relative reduction of %s at equal %s, per seed, against %s", c.Stat, c.By, num(c.Threshold))}
	switch {
	case !e.known():
		d.verdict, d.reason = Unsettled, "unsettled: one seed, no interval"
	case e.Lo >= c.Threshold && e.Lo > 0:
		d.verdict = Holds
	case e.Hi < c.Threshold || e.Hi <= 0:
		d.verdict, d.reason = Fails, fmt.Sprintf("does not hold: the gain is below %s", num(c.Threshold))
	default:
		d.verdict, d.reason = Unsettled, fmt.Sprintf("unsettled: the interval straddles %s", num(c.Threshold))
	}
	return d
}
