package claims

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/xp-nlp/xp/internal/srcerr"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/internal/yamldoc"
)

// File is a claims file: where its runs' records are kept, the papers,
// the runs and the claims.
type File struct {
	// Path is the file as read; configs and the records folder are
	// relative to its folder.
	Path string `yaml:"-"`
	// Records is the folder holding one run folder per run (relative to
	// the file's folder): the records the repository keeps.
	Records string  `yaml:"records"`
	Papers  []Paper `yaml:"papers"`
	Runs    []Run   `yaml:"runs"`
	Claims  []Claim `yaml:"claims"`
	// Code is the code the records may come from (checked by Decide).
	Code Code `yaml:"code"`
	// Lineage places the records' commits (nil: git, in the checkout
	// holding the file).
	Lineage Lineage `yaml:"-"`

	between   map[string]error // Lineage's answers, by commit
	unchecked []string
}

// Paper is one paper whose conclusions are claimed.
type Paper struct {
	ID string `yaml:"id"`
	// Cite names it as the tables do ("Feyisetan et al. 2020").
	Cite string `yaml:"cite"`
	// Text is the file of the paper's text the claims cite (outside the
	// repository: ../shared/docs/papers).
	Text string `yaml:"text"`
}

// Run is a run whose records decide claims: a config of the papers'
// (relative to the claims file's folder), the --set overrides it was run
// with, and why it is smaller than the config when it is.
type Run struct {
	// Name is the run's folder under Records.
	Name   string   `yaml:"name"`
	Config string   `yaml:"config"`
	Set    []string `yaml:"set"`
	// Reduced says how the run is smaller than its config (fewer draws,
	// words, seeds or ε) and why: "" for a full-size run. A run with
	// overrides must say whether they reduce it (Variant otherwise).
	Reduced string `yaml:"reduced"`
	// Variant says what the overrides change without reducing the run
	// (another setup of the paper's, common random numbers).
	Variant string `yaml:"variant"`

	line int
}

// Claim is one statement of a paper (or a property of a mechanism), the
// rule that decides it and the points of the records it reads.
type Claim struct {
	Paper string `yaml:"paper"`
	// Item names the figure, table or section ("Fig. 5", "Abstract").
	Item string `yaml:"item"`
	// Cites is where the paper says it (section, figure or table).
	Cites string `yaml:"cites"`
	// Kind is conclusion (what the paper concludes from its experiments,
	// a statement that the data could have contradicted), sanity (what
	// follows by construction from a mechanism's or a procedure's
	// definition, or an assumption the paper rests on) or variant (a
	// conclusion tested again on another reading of the paper's setup,
	// or against another comparator than the paper's): sanity checks and
	// variants are shown apart and not counted.
	Kind string `yaml:"kind"`
	// Says is the statement, paraphrased.
	Says string `yaml:"says"`
	// Rule decides it (rules.go); Stat is the statistic every point reads
	// unless the point names its own.
	Rule string `yaml:"rule"`
	Stat string `yaml:"stat"`
	// Run is the run the points read unless a point names its own.
	Run string `yaml:"run"`
	// Points are where the statistic is read, in the rule's order: one
	// group of points. Groups gives several (each decided by the rule;
	// how their decisions combine is the rule's). Epsilons repeats every
	// group once per ε, for the points that give none.
	Points   []Point   `yaml:"points"`
	Groups   [][]Point `yaml:"groups"`
	Epsilons []float64 `yaml:"epsilons"`
	// Threshold is the bound of at-most, at-least and range.
	Threshold float64 `yaml:"threshold"`
	// Min is how many ε of the grid a range must hold at (range).
	Min int `yaml:"min"`
	// Identity marks an ε where the mechanism is nearly the identity —
	// the share of in-vocabulary tokens it leaves unchanged is at least
	// this — as uninformative (range: not counted either way).
	Identity float64 `yaml:"identity"`
	// Margin is a difference too small to matter, stated by the claim:
	// values whose difference lies within ±Margin count as ties, neither
	// above nor below (dominates); a reference loss within Margin of 0 is
	// too small to reduce by a share (matched-gain).
	Margin float64 `yaml:"margin"`
	// Factor is within-factor's largest ratio of the largest to the
	// smallest value, and far-greater's least ratio of the first value to
	// the second ("far more" stated as a factor).
	Factor float64 `yaml:"factor"`
	// Cap is the bound a capped search stopped at: a value recorded as ∞
	// is known to be at least Cap, no more (far-greater reads it so).
	Cap float64 `yaml:"cap"`
	// After and Fraction are flattens': every step of the chain after the
	// After-th point is at most Fraction of the first step.
	After    int     `yaml:"after"`
	Fraction float64 `yaml:"fraction"`
	// By is matched-gain's privacy statistic, matched between the curves.
	By string `yaml:"by"`
	// ByRun and ByAnalysis, given together, read By from another run's
	// analysis rows of each point's setting at the same ε, paired with
	// the point's own statistic by seed: a utility run's accuracy matched
	// by the privacy its attack run measured (matched-gain).
	ByRun      string `yaml:"by_run"`
	ByAnalysis string `yaml:"by_analysis"`
	// Published are the paper's values at the points of the first group
	// (or at the derived value of a derived rule), in order: a number, a
	// bound (">3e6", "<0.05") or null. A point of any group may carry its
	// own (Point.Pub) instead.
	Published []Published `yaml:"published"`
	// Magnitude is how xp's value is set beside a published one: ratio
	// (default) or difference (for shares near 0); Band the range of the
	// ratio (default 0.5–2) or of the difference that reads "same size".
	Magnitude string    `yaml:"magnitude"`
	Band      []float64 `yaml:"band"`
	// Unit scales xp's values before they are shown and compared (100:
	// a share shown as a percentage, as the paper does); 0 means 1.
	Unit float64 `yaml:"unit"`
	// Differs states the setup differences a reader must weigh.
	Differs string `yaml:"differs"`

	line int
}

// Point names one value of a run's tables: a utility row (Mode set) or an
// analysis row (Analysis set), by setting and ε, or matched where another
// statistic reaches a value.
type Point struct {
	Run      string  `yaml:"run"`
	Setting  string  `yaml:"setting"`
	Mode     string  `yaml:"mode"`
	Analysis string  `yaml:"analysis"`
	Epsilon  float64 `yaml:"epsilon"`
	// Epsilons, when given, pools the point: its value is the mean over
	// these ε (per seed, then over seeds).
	Epsilons []float64 `yaml:"epsilons"`
	// Match, when given, reads the statistic where Match.Stat reaches
	// Match.Value, interpolated between the two ε of the grid that
	// bracket it (the point's ε is then not given).
	Match *Match `yaml:"match"`
	Stat  string `yaml:"stat"`
	// Label names the point in the tables (default: its setting, mode
	// and ε).
	Label string `yaml:"label"`
	// Pub is the paper's value at this point (the claim's published list
	// is the short form for the points of its first group).
	Pub *Published `yaml:"pub"`
}

// Match is where a matched point is read.
type Match struct {
	Stat  string  `yaml:"stat"`
	Value float64 `yaml:"value"`
}

// Published is one published value: a number, or a bound the paper gives
// ("> 3M": Bound ">").
type Published struct {
	Value float64
	Bound string // "", ">" or "<"
	Set   bool   // false: the paper gives none (null)
}

// UnmarshalYAML reads a number, null, or a bound written ">3e6" / "<0.05".
func (p *Published) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a published value is a number, null or a bound such as \">3e6\"", n.Line)
	}
	if n.Tag == "!!null" {
		*p = Published{}
		return nil
	}
	s := strings.TrimSpace(n.Value)
	var bound string
	if strings.HasPrefix(s, ">") || strings.HasPrefix(s, "<") {
		bound, s = s[:1], strings.TrimSpace(s[1:])
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return fmt.Errorf("line %d: published value %q: want a number, null or a bound such as \">3e6\"", n.Line, n.Value)
	}
	*p = Published{Value: v, Bound: bound, Set: true}
	return nil
}

func (p Published) String() string {
	if !p.Set {
		return "—"
	}
	return p.Bound + num(p.Value)
}

// Kinds of claim.
const (
	Conclusion = "conclusion"
	Sanity     = "sanity"
	// Variant is a conclusion tested again on another reading of the
	// paper's setup (shown apart, not counted).
	Variant = "variant"
)

// Read reads and checks a claims file.
func Read(path string) (*File, error) {
	b, err := xio.ReadFileMax(path, xio.MaxConfig)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Parse parses a claims file from b (named path in errors): unknown keys,
// unknown papers, runs, rules and kinds, and points or published values
// that do not fit the rule are errors at their line.
func Parse(path string, b []byte) (*File, error) {
	f := &File{Path: path}
	doc, err := yamldoc.Parse(path, b) // bounded first; its lines name runs and claims below
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(f); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			return nil, fmt.Errorf("%s: %s", path, te.Errors[0])
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		m := doc.Content[0].Content
		for i := 0; i+1 < len(m); i += 2 {
			for j, n := range m[i+1].Content {
				switch m[i].Value {
				case "runs":
					if j < len(f.Runs) {
						f.Runs[j].line = n.Line
					}
				case "claims":
					if j < len(f.Claims) {
						f.Claims[j].line = n.Line
					}
				}
			}
		}
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

var commitHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// check validates the file as a whole: names unique and known, every
// claim's rule fed what it reads.
func (f *File) check() error {
	if f.Records == "" {
		return srcerr.At(f.Path, 1, "records: name the folder of the runs' records")
	}
	if f.Code.Since != "" && !commitHash.MatchString(f.Code.Since) {
		return srcerr.At(f.Path, 1, "code.since %q: a commit's full hash (40 hexadecimal digits)", f.Code.Since)
	}
	papers := map[string]bool{}
	for _, p := range f.Papers {
		if p.ID == "" || p.Cite == "" {
			return srcerr.At(f.Path, 1, "a paper needs id and cite")
		}
		papers[p.ID] = true
	}
	runs := map[string]bool{}
	for _, r := range f.Runs {
		bad := func(format string, a ...any) error { return srcerr.At(f.Path, r.line, format, a...) }
		switch {
		case r.Name == "" || r.Config == "":
			return bad("a run needs name and config")
		case r.Name != filepath.Base(r.Name) || strings.HasPrefix(r.Name, "."):
			return bad("run name %q: a folder name, no separators", r.Name)
		case runs[r.Name]:
			return bad("run %q named twice", r.Name)
		case len(r.Set) > 0 && r.Reduced == "" && r.Variant == "":
			return bad("run %s has overrides: say how they reduce it (reduced:) or what they vary (variant:)", r.Name)
		}
		runs[r.Name] = true
	}
	for i := range f.Claims {
		c := &f.Claims[i]
		if err := c.check(papers, runs); err != nil {
			return srcerr.At(f.Path, c.line, "%v", err)
		}
	}
	return nil
}

func (c *Claim) check(papers, runs map[string]bool) error {
	switch {
	case c.Paper == "" || c.Item == "" || c.Says == "" || c.Cites == "":
		return errors.New("a claim needs paper, item, cites and says")
	case !papers[c.Paper]:
		return fmt.Errorf("paper %q is not among papers:", c.Paper)
	case c.Kind != Conclusion && c.Kind != Sanity && c.Kind != Variant:
		return fmt.Errorf("kind %q: want %s, %s or %s", c.Kind, Conclusion, Sanity, Variant)
	case c.Points != nil && c.Groups != nil:
		return errors.New("give points (one group) or groups, not both")
	case len(c.Points) == 0 && len(c.Groups) == 0:
		return errors.New("no points")
	case c.Magnitude != "" && c.Magnitude != "ratio" && c.Magnitude != "difference":
		return fmt.Errorf("magnitude %q: want ratio or difference", c.Magnitude)
	case c.Band != nil && (len(c.Band) != 2 || c.Band[0] >= c.Band[1]):
		return errors.New("band: give [low, high], low < high")
	}
	r, ok := ruleOf(c.Rule)
	if !ok {
		return fmt.Errorf("rule %q, want one of %s", c.Rule, strings.Join(ruleNames(), ", "))
	}
	switch {
	case (c.ByRun == "") != (c.ByAnalysis == ""):
		return errors.New("give by_run and by_analysis together")
	case c.ByRun != "" && !runs[c.ByRun]:
		return fmt.Errorf("by_run %q: runs: does not list it", c.ByRun)
	}
	for _, g := range c.groups() {
		for j, p := range g {
			if c.stat(p) == "" {
				return fmt.Errorf("point %d has no stat (and the claim none)", j+1)
			}
			if (p.Mode == "") == (p.Analysis == "") {
				return fmt.Errorf("point %d: give mode (a utility row) or analysis (an analysis row)", j+1)
			}
			run := cmpOr(p.Run, c.Run)
			if !runs[run] {
				return fmt.Errorf("point %d reads run %q, which runs: does not list", j+1, run)
			}
			if p.Pub != nil && c.Published != nil {
				return fmt.Errorf("point %d: give published values on the points (pub) or for the claim (published), not both", j+1)
			}
			if p.Match != nil && (p.Epsilon != 0 || p.Epsilons != nil) {
				return fmt.Errorf("point %d: a matched point takes no epsilon", j+1)
			}
		}
	}
	return r.check(c)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// runsRead are the runs the claim reads: its points' and by_run.
func (c *Claim) runsRead() []string {
	var rs []string
	for _, g := range c.groups() {
		for _, p := range g {
			rs = append(rs, cmpOr(p.Run, c.Run))
		}
	}
	if c.ByRun != "" {
		rs = append(rs, c.ByRun)
	}
	return rs
}

// groups are the claim's groups of points, one per ε of Epsilons when it
// gives them (a point with its own ε keeps it).
func (c *Claim) groups() [][]Point {
	gs := c.Groups
	if gs == nil {
		gs = [][]Point{c.Points}
	}
	if len(c.Epsilons) == 0 {
		return gs
	}
	var out [][]Point
	for _, g := range gs {
		for _, e := range c.Epsilons {
			h := slices.Clone(g)
			for i := range h {
				if h[i].Epsilon == 0 && h[i].Epsilons == nil && h[i].Match == nil {
					h[i].Epsilon = e
				}
			}
			out = append(out, h)
		}
	}
	return out
}

func (c *Claim) stat(p Point) string { return cmpOr(p.Stat, c.Stat) }

// Line is where the claim starts in its file.
func (c Claim) Line() int { return c.line }

// Line is where the run starts in its file.
func (r Run) Line() int { return r.line }

// Run returns the named run.
func (f *File) Run(name string) (Run, bool) {
	i := slices.IndexFunc(f.Runs, func(r Run) bool { return r.Name == name })
	if i < 0 {
		return Run{}, false
	}
	return f.Runs[i], true
}

// Dir is the folder of a run's records.
func (f *File) Dir(run string) string {
	return filepath.Join(filepath.Dir(f.Path), f.Records, run)
}

// ConfigPath is a run's config file.
func (f *File) ConfigPath(r Run) string { return filepath.Join(filepath.Dir(f.Path), r.Config) }

// Cite is the paper's citation ("" when unknown).
func (f *File) Cite(id string) string {
	for _, p := range f.Papers {
		if p.ID == id {
			return p.Cite
		}
	}
	return ""
}

func (p Point) String() string {
	if p.Label != "" {
		return p.Label
	}
	parts := []string{p.Setting}
	if p.Mode != "" && p.Mode != "none" {
		parts = append(parts, p.Mode)
	}
	switch {
	case p.Match != nil:
		parts = append(parts, fmt.Sprintf("at %s = %s", p.Match.Stat, num(p.Match.Value)))
	case p.Epsilons != nil:
		var es []string
		for _, e := range p.Epsilons {
			es = append(es, num(e))
		}
		parts = append(parts, "ε="+strings.Join(es, ",")+" (mean)")
	case p.Epsilon != 0:
		parts = append(parts, "ε="+num(p.Epsilon))
	}
	if p.Stat != "" {
		parts = append(parts, "("+p.Stat+")")
	}
	return strings.Join(parts, " ")
}

func num(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "−∞"
	case math.IsNaN(x):
		return "—"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}
