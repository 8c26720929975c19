package claims

import (
	"fmt"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/table"
)

// RuleText is how every verdict is reached, printed under the tables.
const RuleText = "Each xp value carries a 95% interval, and the basis it was made on is named beside it: Student's t over seeds; " +
	"exact, for a value computed from a known output distribution over the whole population it describes; " +
	"on one seed, the record's own interval — over its Monte-Carlo draws (E_M), from the order statistics of a seeded sample of words (a percentile), " +
	"or the range simulated votes leave open (a query attack's N); the bracket a bisection left open (an ε found by search); " +
	"for a worst case, the extreme over every sampled word of every seed; for a value matched between grid points, the two values that bracket it. " +
	"A comparison **holds** when the intervals are on the claimed side of each other (or of the threshold), **does not hold** when they are on the other side, " +
	"and is **unsettled** when they overlap or a sampled value rests on one seed with no interval. Two values with values on the same seeds " +
	"are compared by the 95% t-interval of their per-seed differences (paired: seeds are independent replications, and a seed samples the same " +
	"words for every setting of an analysis). A claim of several comparisons holds when all hold, does not hold when any does not, and is unsettled otherwise. " +
	"The magnitude sets xp's value beside the published one: xp ÷ published with its interval, \"same size\" within 0.5–2× unless the row states another band (a difference for shares near 0). " +
	"A run marked reduced is smaller than its config (the records column says how); its plan is checked against the config and the overrides the claims file names before any verdict reads it."

// Summary counts the agreements: conclusions by verdict, magnitudes by
// verdict, sanity checks by verdict.
func Summary(as []Agreement) string {
	conc, sanity, mag := map[string]int{}, map[string]int{}, map[string]int{}
	var nc, ns, nv int
	for _, a := range as {
		switch a.Claim.Kind {
		case Sanity:
			ns++
			sanity[a.Verdict]++
			continue
		case Variant:
			nv++
			continue
		}
		nc++
		conc[a.Verdict]++
		if a.Magnitude.Verdict != "" {
			mag[a.Magnitude.Verdict]++
		}
	}
	return fmt.Sprintf("%d conclusions: %d hold, %d do not hold, %d unsettled, %d need the checkpoint (they fine-tune a pretrained model, and no run of it is recorded), %d not run here. "+
		"Magnitudes of the conclusions that publish values: %d the same size, %d differ. "+
		"Apart, not counted: %d sanity checks (what follows by construction from a mechanism's or a procedure's definition, or what a paper assumes: %d hold, %d do not hold, %d unsettled, %d not run here) "+
		"and %d conclusions tested again on another reading of a paper's setup or against another comparator.",
		nc, conc[Holds], conc[Fails], conc[Unsettled], conc[NeedsCheckpoint], conc[NotRun], mag[SameSize], mag[Differs],
		ns, sanity[Holds], sanity[Fails], sanity[Unsettled], sanity[NotRun], nv)
}

// Grid is the table of the agreements of one kind (Conclusion, Sanity or
// Variant): one row per claim.
func Grid(as []Agreement, kind string) table.Grid {
	g := table.Grid{Header: []string{"paper", "item", "the paper says", "test", "xp", "verdict", "why / found", "published", "xp vs published", "magnitude", "records", "setup here"}}
	g.Numeric = make([]bool, len(g.Header))
	g.Strong = make([]bool, len(g.Header))
	g.Strong[5], g.Strong[9] = true, true
	for _, a := range as {
		if a.Claim.Kind != kind {
			continue
		}
		c := a.Claim
		stat := c.Stat
		if stat == "" {
			stat = c.groups()[0][0].Stat
		}
		test := stat + ": " + c.rule().Doc
		switch c.Rule {
		case "at-most", "at-least":
			test += " (" + num(c.Threshold) + ")"
		case "range":
			test += fmt.Sprintf(" (threshold %s, min %d)", num(c.Threshold), c.Min)
		case "within-factor":
			test += " (factor " + num(c.Factor) + ")"
		case "flattens":
			test += fmt.Sprintf(" (after %d, fraction %s)", c.After, num(c.Fraction))
		case "matched-gain":
			test += " (by " + c.By + ")"
		}
		switch {
		case c.Margin > 0 && c.Rule == "matched-gain":
			test += "; a reference loss under " + num(c.Margin) + " not read"
		case c.Margin > 0:
			test += "; differences within ±" + num(c.Margin) + " count as ties"
		}
		if c.Identity > 0 {
			test += fmt.Sprintf("; near the identity: ≥ %s%% unchanged", num(100*c.Identity))
		}
		var pub []string
		pubs := append([]Published(nil), c.Published...)
		for _, g := range c.groups() {
			for _, p := range g {
				if p.Pub != nil {
					pubs = append(pubs, *p.Pub)
				}
			}
		}
		for _, p := range pubs {
			pub = append(pub, p.String())
		}
		var runs []string
		for i, r := range a.Runs {
			if a.Reduced[i] != "" {
				r += " (reduced: " + a.Reduced[i] + ")"
			}
			runs = append(runs, r)
		}
		settle := ""
		if a.Settle != nil {
			settle = "To settle: " + a.Settle.Text()
		}
		why := strings.TrimSpace(strings.Join(nonEmpty(a.Reason, a.Detail, settle), ". "))
		g.Rows = append(g.Rows, []string{a.Cite, c.Item, c.Says + " (" + c.Cites + ")", test, valuesText(a), a.Verdict, why,
			strings.Join(pub, " / "), a.Magnitude.Text, a.Magnitude.Verdict, strings.Join(runs, "; "), c.Differs})
	}
	return g
}

// valuesText is xp's values: the derived value, or each point's with its
// interval and basis (one group), or each group's means (several).
func valuesText(a Agreement) string {
	if (a.Verdict == NotRun || a.Verdict == NeedsCheckpoint) && len(a.Values) == 0 {
		return "—"
	}
	if a.Derived != nil {
		return a.Derived.text()
	}
	if len(a.Values) == 1 {
		var parts []string
		for i, v := range a.Values[0] {
			s := v.text()
			if len(a.Values[0]) > 1 {
				s = a.Claim.groups()[0][i].String() + ": " + s
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, " / ")
	}
	labels := groupLabels(a.Claim.groups())
	var parts []string
	for i, vs := range a.Values {
		var xs []string
		for _, v := range vs {
			x := num(v.Mean)
			if v.known() && (v.Lo != v.Mean || v.Hi != v.Mean) {
				x += " [" + num(v.Lo) + ", " + num(v.Hi) + "]"
			}
			xs = append(xs, x)
		}
		parts = append(parts, labels[i]+": "+strings.Join(xs, " / "))
	}
	return strings.Join(parts, "; ")
}

// groupLabels name each group by what its points share and the other
// groups' do not (the ε, the K, the matched value); "group i" when
// nothing does.
func groupLabels(gs [][]Point) []string {
	tokens := func(p Point) []string {
		t := strings.Fields(p.Setting)
		if p.Mode != "" && p.Mode != "none" {
			t = append(t, p.Mode)
		}
		if p.Epsilon != 0 {
			t = append(t, "ε="+num(p.Epsilon))
		}
		if p.Match != nil {
			t = append(t, fmt.Sprintf("%s = %s", p.Match.Stat, num(p.Match.Value)))
		}
		if p.Stat != "" {
			t = append(t, p.Stat)
		}
		return t
	}
	common := func(ps []Point) []string {
		var c []string
		for i, p := range ps {
			t := tokens(p)
			if i == 0 {
				c = t
				continue
			}
			c = slices.DeleteFunc(c, func(x string) bool { return !slices.Contains(t, x) })
		}
		return c
	}
	var all []Point
	for _, g := range gs {
		all = append(all, g...)
	}
	everywhere := common(all)
	labels := make([]string, len(gs))
	for i, g := range gs {
		own := slices.DeleteFunc(common(g), func(x string) bool { return slices.Contains(everywhere, x) })
		labels[i] = strings.Join(own, " ")
		if labels[i] == "" {
			labels[i] = fmt.Sprintf("group %d", i+1)
		}
	}
	return labels
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// Markdown is the agreement tables as docs/reproduction.md shows them:
// the summary, the conclusions, the sanity checks, then how verdicts
// are reached.
func Markdown(as []Agreement) string {
	var b strings.Builder
	b.WriteString(Summary(as) + "\n\n")
	b.WriteString("### Conclusions\n\n")
	b.WriteString(Grid(as, Conclusion).Markdown())
	b.WriteString("\n### Sanity checks\n\n")
	b.WriteString("What follows by construction from a mechanism's or a procedure's definition (an ordering it produces whatever the data, a value at an ε where it is nearly the identity), and what a paper assumes: a failure here is a bug in xp or a broken assumption, not a finding about the data.\n\n")
	b.WriteString(Grid(as, Sanity).Markdown())
	b.WriteString("\n### Setup variants\n\n")
	b.WriteString("Conclusions tested again on another reading of a paper's setup or against another comparator (the records column names the variant run; the claims file says what it varies).\n\n")
	b.WriteString(Grid(as, Variant).Markdown())
	b.WriteString("\n" + RuleText + "\n")
	return b.String()
}
