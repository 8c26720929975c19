package results

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
	"gopkg.in/yaml.v3"

	"github.com/xp-nlp/xp/internal/srcerr"
)

// A Claim is one conclusion a paper draws, with the values it publishes
// and the rule that decides, from a run's records, whether xp's numbers
// agree with it. Claims are data (configs/paper/published.yaml): no
// verdict is typed by hand.
type Claim struct {
	// Config is the config file whose run the claim reads, relative to
	// the claims file's folder ("paper/…").
	Config string `yaml:"config"`
	// Item names the figure or table ("CusText Table 8").
	Item string `yaml:"item"`
	// Says is the paper's conclusion in words.
	Says string `yaml:"says"`
	// Rule decides it (see Rules); Stat is the statistic it reads at
	// every point (a point may name its own).
	Rule string  `yaml:"rule"`
	Stat string  `yaml:"stat"`
	Bar  float64 `yaml:"threshold"` // at-most and at-least
	// Points are where the statistic is read, in the rule's order.
	Points []ClaimPoint `yaml:"points"`
	// Published are the paper's values at the points (null where the
	// paper gives none), shown beside xp's; the rule does not read them.
	Published []*float64 `yaml:"published"`
	// Unit scales xp's value before it is shown and compared (100: a
	// share shown as a percentage as the paper does); 0 means 1.
	Unit float64 `yaml:"unit"`
	// Differs states the setup differences a reader must weigh.
	Differs string `yaml:"differs"`
	// Run is the run folder read, when it is not the config's output (a
	// reduced run made with --set overrides); the table names it.
	Run string `yaml:"run"`

	line int // where the claim starts in its file
}

// ClaimPoint names one row of a run's tables: a utility row (Mode set)
// or an analysis row (Analysis set), by setting and ε.
type ClaimPoint struct {
	Setting  string  `yaml:"setting"`
	Mode     string  `yaml:"mode"`
	Analysis string  `yaml:"analysis"`
	Epsilon  float64 `yaml:"epsilon"`
	Stat     string  `yaml:"stat"`
}

// Rules are the decisions a claim can ask for, and what each says.
var Rules = map[string]string{
	"greater":    "the first point's value is above the second's",
	"decreasing": "each point's value is below the one before",
	"increasing": "each point's value is above the one before",
	"at-most":    "every point's value is at most the threshold (the threshold included)",
	"at-least":   "every point's value is at least the threshold (the threshold included)",
}

// RuleText is the stated rule every verdict follows.
const RuleText = "Each xp value is the mean over seeds with its 95% interval (Student's t over seeds; " +
	"a statistic computed exactly from a known output distribution has no sampling interval, except a query attack's N on one seed whose vote was simulated, " +
	"which carries the interval the simulated accuracies leave open). " +
	"A comparison **holds** when the intervals are on the claimed side of each other (or of the threshold), " +
	"**does not hold** when they are on the other side, and is **unsettled** when they overlap the decision, " +
	"or when a sampled value rests on one seed (no interval). Two values measured on the same seeds " +
	"are compared by the 95% interval of their per-seed differences instead (paired: seeds are independent replications, " +
	"and a seed samples the same words for every setting of an analysis). A claim of several comparisons holds when all hold, " +
	"does not hold when any does not, and is unsettled otherwise. The published values are shown, not used: " +
	"absolute values differ with the setup (vectors, model), conclusions should not."

// ReadClaims reads and checks a claims file: a YAML list of claims.
func ReadClaims(path string) ([]Claim, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseClaims(path, b)
}

// ParseClaims parses claims from b (named path in errors): unknown keys,
// unknown rules, and points or published values that do not fit the rule
// are errors at their line.
func ParseClaims(path string, b []byte) ([]Claim, error) {
	var claims []Claim
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&claims); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			return nil, fmt.Errorf("%s: %s", path, te.Errors[0])
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.SequenceNode {
		for i, n := range doc.Content[0].Content {
			if i < len(claims) {
				claims[i].line = n.Line
			}
		}
	}
	for i := range claims {
		c := &claims[i]
		bad := func(format string, a ...any) error { return srcerr.At(path, c.line, format, a...) }
		switch {
		case c.Config == "" || c.Item == "" || c.Says == "":
			return nil, bad("a claim needs config, item and says")
		case Rules[c.Rule] == "":
			return nil, bad("rule %q, want one of %s", c.Rule, strings.Join(ruleNames(), ", "))
		case c.Rule == "greater" && len(c.Points) != 2:
			return nil, bad("rule greater compares 2 points, not %d", len(c.Points))
		case (c.Rule == "increasing" || c.Rule == "decreasing") && len(c.Points) < 2:
			return nil, bad("rule %s needs at least 2 points", c.Rule)
		case len(c.Points) == 0:
			return nil, bad("no points")
		case c.Published != nil && len(c.Published) != len(c.Points):
			return nil, bad("%d published values for %d points", len(c.Published), len(c.Points))
		}
		for j, p := range c.Points {
			if c.stat(j) == "" {
				return nil, bad("point %d has no stat (and the claim none)", j+1)
			}
			if (p.Mode == "") == (p.Analysis == "") {
				return nil, bad("point %d: give mode (a utility row) or analysis (an analysis row)", j+1)
			}
		}
	}
	return claims, nil
}

func ruleNames() []string {
	var n []string
	for k := range Rules {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

func (c Claim) stat(i int) string {
	if s := c.Points[i].Stat; s != "" {
		return s
	}
	return c.Stat
}

// Line is where the claim starts in its file.
func (c Claim) Line() int { return c.line }

// Estimate is xp's value at a point: a mean and the half-width of its 95%
// interval (0: exact; NaN: unknown, one seed of a sampled value), over
// Seeds seeds. Found is false when the run has no such row.
type Estimate struct {
	Mean, CI float64
	Seeds    int
	Found    bool
	// Exact: computed from a known output distribution (no sampling
	// interval); a sampled value whose seeds agree has CI 0 too.
	Exact bool
	// Simulated: one seed's value that an exact analysis estimated by
	// simulation (a query attack's N); CI is the larger side of its
	// recorded interval.
	Simulated bool
	// bySeed are the values by seed, where the run has them (analysis
	// rows): two estimates on the same seeds are compared pairwise.
	bySeed map[uint64]float64
}

func (e Estimate) lo() float64 { return e.Mean - e.CI }
func (e Estimate) hi() float64 { return e.Mean + e.CI }

// Verdicts.
const (
	Holds     = "holds"
	Fails     = "does not hold"
	Unsettled = "unsettled"
	NotRun    = "not run here"
)

// Agreement is a claim decided on a run.
type Agreement struct {
	Claim   Claim
	Values  []Estimate
	Verdict string
	Reason  string // why it does not hold, or is unsettled, or was not run
	// Dir is the run folder the claim was decided on ("" when not set).
	Dir string
}

// Agree reads the claim's points from a run's utility rows and analysis
// rows and decides it by its rule.
func Agree(c Claim, rows []Row, stats []StatRow) Agreement {
	a := Agreement{Claim: c}
	unit := c.Unit
	if unit == 0 {
		unit = 1
	}
	for i, p := range c.Points {
		e := lookup(p, c.stat(i), rows, stats)
		e.Mean *= unit
		e.CI *= unit
		a.Values = append(a.Values, e)
		if !e.Found {
			a.Verdict = NotRun
			a.Reason = fmt.Sprintf("no %s at %s", c.stat(i), p)
			return a
		}
	}
	type decision struct{ verdict, what string }
	var ds []decision
	compare := func(x, y Estimate, what string) { ds = append(ds, decision{order(x, y), what}) }
	v := a.Values
	switch c.Rule {
	case "greater":
		compare(v[0], v[1], fmt.Sprintf("%s vs %s", c.Points[0], c.Points[1]))
	case "increasing", "decreasing":
		for i := 1; i < len(v); i++ {
			x, y := v[i], v[i-1]
			if c.Rule == "decreasing" {
				x, y = y, x
			}
			compare(x, y, fmt.Sprintf("%s → %s", c.Points[i-1], c.Points[i]))
		}
	case "at-most", "at-least":
		for i := range v {
			ds = append(ds, decision{bound(v[i], c.Bar, c.Rule == "at-most"), fmt.Sprintf("%s (%s)", c.Points[i], fnum(v[i].Mean))})
		}
	}
	a.Verdict = Holds
	for _, d := range ds {
		if d.verdict == Fails {
			a.Verdict = Fails
			break
		}
		if d.verdict == Unsettled {
			a.Verdict = Unsettled
		}
	}
	if a.Verdict != Holds {
		var where []string
		for _, d := range ds {
			if d.verdict == a.Verdict {
				where = append(where, d.what)
			}
		}
		a.Reason = a.Verdict + " at " + strings.Join(where, "; ")
		if a.Verdict == Unsettled && slices.ContainsFunc(v, func(e Estimate) bool { return math.IsNaN(e.CI) }) {
			a.Reason += " (one seed of a sampled value: no interval)"
		}
	}
	return a
}

// order decides x > y: holds when x's interval is above y's, fails when
// it is at or below it, unsettled when they overlap or one is unknown.
// Two values with values on at least two common seeds are compared by
// the 95% t-interval of their per-seed differences instead (paired:
// seeds are independent replications, and a seed samples the same words
// for every setting of an analysis).
func order(x, y Estimate) string {
	if d, ok := paired(x, y); ok { // x − y against 0
		x, y = d, Estimate{}
	}
	if math.IsNaN(x.CI) || math.IsNaN(y.CI) {
		return Unsettled
	}
	switch {
	case x.lo() > y.hi():
		return Holds
	case x.hi() <= y.lo():
		return Fails
	}
	return Unsettled
}

// paired is the mean of x − y over the seeds both have and the
// half-width of its 95% t-interval; ok is false under two common seeds.
func paired(x, y Estimate) (d Estimate, ok bool) {
	var diffs []float64
	for s, v := range x.bySeed {
		if w, in := y.bySeed[s]; in {
			diffs = append(diffs, v-w)
		}
	}
	if len(diffs) < 2 {
		return d, false
	}
	slices.Sort(diffs) // summation order independent of map order
	m, sd := meanSD(diffs)
	n := float64(len(diffs))
	return Estimate{Mean: m, CI: distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975) * sd / math.Sqrt(n), Seeds: len(diffs), Found: true}, true
}

// bound decides x ≤ bar (atMost) or x ≥ bar: holds when x's interval is
// on that side (the bound itself included), fails when it is wholly on
// the other, unsettled when it straddles the bound or is unknown.
func bound(x Estimate, bar float64, atMost bool) string {
	if math.IsNaN(x.CI) {
		return Unsettled
	}
	lo, hi := x.lo(), x.hi()
	if !atMost {
		lo, hi, bar = -hi, -lo, -bar
	}
	switch {
	case hi <= bar:
		return Holds
	case lo > bar:
		return Fails
	}
	return Unsettled
}

func (p ClaimPoint) String() string {
	parts := []string{p.Setting}
	if p.Mode != "" && p.Mode != "none" {
		parts = append(parts, p.Mode)
	}
	if p.Epsilon != 0 {
		parts = append(parts, "ε="+strconv.FormatFloat(p.Epsilon, 'g', -1, 64))
	}
	if p.Stat != "" {
		parts = append(parts, "("+p.Stat+")")
	}
	return strings.Join(parts, " ")
}

// lookup finds a point's value: the utility statistics accuracy,
// macro-F1, Δ accuracy (paired difference to the baseline) and unchanged
// (share of in-vocabulary tokens), or any statistic of an analysis row.
func lookup(p ClaimPoint, stat string, rows []Row, stats []StatRow) Estimate {
	if p.Mode != "" {
		for _, r := range rows {
			if r.Setting != p.Setting || r.Mode != p.Mode || r.Epsilon != p.Epsilon || r.Seeds == 0 {
				continue
			}
			e := Estimate{Seeds: r.Seeds, Found: true, bySeed: r.BySeed[stat]}
			switch stat {
			case "accuracy":
				e.Mean, e.CI = r.Accuracy, r.AccCI
			case "macro-F1":
				e.Mean, e.CI = r.MacroF1, r.MacroF1CI
			case "Δ accuracy":
				e.Mean, e.CI = r.Diff, r.DiffCI
			case "unchanged":
				e.Mean, e.CI = r.Unchanged, r.UnchangedCI
			default:
				return Estimate{}
			}
			return e
		}
		return Estimate{}
	}
	for _, r := range stats {
		if r.Analysis != p.Analysis || r.Setting != p.Setting || r.Epsilon != p.Epsilon || r.Seeds == 0 {
			continue
		}
		i := slices.Index(r.Names, stat)
		if i < 0 {
			return Estimate{}
		}
		e := Estimate{Mean: r.Mean[i], CI: r.CI[i], Seeds: r.Seeds, Found: true, bySeed: r.BySeed[stat]}
		switch iv, ok := r.Interval[stat]; {
		case strings.HasPrefix(r.Method, "exact") && ok:
			e.Simulated, e.CI = true, halfWidth(e.Mean, iv[0], iv[1])
		case strings.HasPrefix(r.Method, "exact"):
			e.Exact = true
			if r.Seeds == 1 {
				e.CI = 0
			}
		}
		return e
	}
	return Estimate{}
}

// halfWidth is the larger distance from m to lo or hi (any of them +∞: a
// query attack's N that no vote reached by the cap): 0 where the range is
// closed at m, +∞ where m is +∞ and lo is not. The searches behind lo and
// hi need not bracket m (the accuracy is not monotone in N): the
// distances count either way.
func halfWidth(m, lo, hi float64) float64 {
	switch {
	case lo == m && hi == m:
		return 0
	case math.IsInf(m, 1):
		return math.Inf(1)
	}
	return max(math.Abs(m-lo), math.Abs(hi-m))
}

// AgreementMarkdown writes the agreement table: one row per claim with
// the published values beside xp's, the verdict and its reason, then the
// rule.
func AgreementMarkdown(as []Agreement) string { return AgreementGrid(as).Markdown() }

// AgreementGrid is the agreement table of AgreementMarkdown, its counts
// and rule as notes.
func AgreementGrid(as []Agreement) Grid {
	var g Grid
	for _, h := range []string{"item", "the paper says", "rule", "published", "xp", "verdict", "why / setup"} {
		g.column(h, false)
	}
	g.Strong = []bool{5: true}
	counts := map[string]int{}
	for _, a := range as {
		c := a.Claim
		counts[a.Verdict]++
		var pub, got []string
		for i := range c.Points {
			if c.Published != nil && c.Published[i] != nil {
				pub = append(pub, fnum(*c.Published[i]))
			} else {
				pub = append(pub, "—")
			}
			if i < len(a.Values) && a.Values[i].Found {
				got = append(got, estimateText(a.Values[i]))
			} else {
				got = append(got, "—")
			}
		}
		rule := Rules[c.Rule]
		if c.Rule == "at-most" || c.Rule == "at-least" {
			rule += " " + fnum(c.Bar)
		}
		run := ""
		if c.Run != "" {
			run = "run " + c.Run
		}
		why := strings.TrimSpace(strings.Join(nonEmpty(a.Reason, run, c.Differs), ". "))
		g.Rows = append(g.Rows, []string{c.Item, c.Says, c.stat(0) + ": " + rule, strings.Join(pub, " / "), strings.Join(got, " / "), a.Verdict, why})
	}
	g.Notes = []string{fmt.Sprintf("%d claims: %d hold, %d do not hold, %d unsettled, %d not run here. The values are listed in the order of the claim's points (the claims file names them).", len(as), counts[Holds], counts[Fails], counts[Unsettled], counts[NotRun]),
		RuleText}
	return g
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

func estimateText(e Estimate) string {
	seeds := fmt.Sprintf("%d seeds", e.Seeds)
	if e.Seeds == 1 {
		seeds = "1 seed"
	}
	switch {
	case math.IsNaN(e.CI):
		return fmt.Sprintf("%s (%s)", fnum(e.Mean), seeds)
	case e.Exact && e.CI == 0:
		return fmt.Sprintf("%s (exact, %s)", fnum(e.Mean), seeds)
	case e.Simulated:
		return fmt.Sprintf("%s ± %s (simulated votes, %s)", fnum(e.Mean), fnum(e.CI), seeds)
	case e.CI == 0:
		return fmt.Sprintf("%s (all %s equal)", fnum(e.Mean), seeds)
	}
	return fmt.Sprintf("%s ± %s (%s)", fnum(e.Mean), fnum(e.CI), seeds)
}
