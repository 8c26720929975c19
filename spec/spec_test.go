package spec

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		mech string
		eps  float64
		raw  map[string]any
		want string // "" for accepted
	}{
		{"laplace", 10, nil, ""},
		{"laplace", 0, nil, "laplace: ε = 0, want a finite value > 0"},
		{"laplace", -1, nil, "ε = -1"},
		{"laplace", math.Inf(1), nil, "ε = +Inf, want a finite value > 0"},
		{"laplace", math.NaN(), nil, "ε = NaN"},
		{"laplace", 1, map[string]any{"t": 0.5}, `laplace: unknown parameter "t" (laplace takes no parameters)`},
		{"vickrey", 1, map[string]any{"t": 0.5}, ""},
		{"vickrey", 1, map[string]any{"t": 1}, ""},
		{"vickrey", 1, map[string]any{"t": 1.5}, "vickrey: parameter t = 1.5, want a number in [0, 1]"},
		{"vickrey", 1, map[string]any{"t": math.Inf(1)}, "parameter t = +Inf"},
		{"vickrey", 1, map[string]any{"t": "half"}, `parameter t = "half", want a number in [0, 1]`},
		{"vickrey", 1, map[string]any{"tt": 1}, `unknown parameter "tt" (known: exclude_input, lambda, rank, t, t_r)`},
		{"vickrey", 1, map[string]any{"rank": 0}, "parameter rank = 0, want an integer in [1, ∞)"},
		{"vickrey", 1, map[string]any{"rank": 2}, ""},
		{"vickrey", 1, map[string]any{"rank": 2.0}, "parameter rank = 2, want an integer"},
		{"vickrey", 1, map[string]any{"rank": 1.9}, "parameter rank = 1.9, want an integer"},
		{"vickrey", 1, map[string]any{"t_r": []any{0.5, 2}}, ""},
		{"vickrey", 1, map[string]any{"t_r": []any{0.5}}, "want a list of at least 2 numbers in [0, ∞)"},
		{"vickrey", 1, map[string]any{"t_r": []any{0.5, -1}}, "parameter t_r = [0.5 -1]"},
		{"vickrey", 1, map[string]any{"t_r": []any{0.5, 1}, "rank": 2}, "vickrey: t_r and rank are different variants: give at most one"},
		{"vickrey", 1, map[string]any{"t": 0.3, "rank": 2}, "t and rank are different variants"},
		{"vickrey", 1, map[string]any{"exclude_input": "yes"}, "want true or false"},
		{"mahalanobis", 1, map[string]any{"lambda": 0}, ""},
		{"mahalanobis", 1, map[string]any{"lambda": -0.1}, "want a number in [0, 1]"},
		{"santext+", 1, map[string]any{"sensitive": 0}, "parameter sensitive = 0, want a number in (0, 1]"},
		{"santext+", 1, map[string]any{"p": 1, "sensitive": 1}, ""},
		{"custext", 1, map[string]any{"k": 0}, "parameter k = 0, want an integer in [1, ∞)"},
		{"custext", 1, map[string]any{"mapping": "greedy"}, `parameter mapping = "greedy", want one of aggressive, balanced, conservative`},
		{"custext+", 1, map[string]any{"strategy": "record", "score": "cosine", "k": 50}, ""},
		{"custext", 1, map[string]any{"removed": "zero", "score": "euclidean"}, `parameter removed = zero needs score = cosine (score = "euclidean" here)`},
		{"custext", 1, map[string]any{"removed": "zero"}, ""}, // cosine by default
		{"custext", 1, map[string]any{"removed": "drop", "score": "euclidean"}, ""},
	} {
		t.Run(fmt.Sprintf("%s %v %v", c.mech, c.eps, c.raw), func(t *testing.T) {
			_, _, err := Resolve(Mechanism, c.mech, c.eps, c.raw)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestResolveFillsDefaults(t *testing.T) {
	d, _ := Lookup(Mechanism, "vickrey")
	v, err := d.Resolve(map[string]any{"exclude_input": true})
	if err != nil {
		t.Fatal(err)
	}
	if v.Float("t") != 0.5 || !v.Bool("exclude_input") || v.Has("rank") || v.Has("t_r") {
		t.Errorf("resolved %v", v)
	}
	if d.NotionOf(v) != NoDP {
		t.Error("input exclusion keeps the metric-DP label")
	}
	// An integer given for a float is normalised: t: 1 and t: 1.0 are one setting.
	a, _ := d.Resolve(map[string]any{"t": 1})
	b, _ := d.Resolve(map[string]any{"t": 1.0})
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("%v vs %v", a, b)
	}
	if _, err := Lookup(Mechanism, "gauss"); err == nil || !strings.Contains(err.Error(), "known: "+strings.Join(Names(Mechanism), ", ")+")") || !strings.Contains(err.Error(), "known: custext, custext+, diffractor, laplace") {
		t.Errorf("unknown mechanism: %v", err)
	}
}

// Every descriptor's defaults satisfy its own rules, and every parameter
// documents itself.
func TestDescriptorsConsistent(t *testing.T) {
	for _, k := range []Kind{Mechanism, Model, Analysis, Stage, Measure} {
		for _, d := range All(k) {
			if d.Doc == "" || d.Kind != k {
				t.Errorf("%s %s: no doc or wrong kind", k, d.Name)
			}
			if (k == Mechanism) != (d.Notion != "") {
				t.Errorf("%s %s: notion %q", k, d.Name, d.Notion)
			}
			for _, p := range d.Params {
				if p.Doc == "" {
					t.Errorf("%s.%s: no doc", d.Name, p.Name)
				}
				if p.Default != nil {
					if v, err := p.Normalize(p.Default); err != nil || fmt.Sprint(v) != fmt.Sprint(p.Default) {
						t.Errorf("%s.%s: default %v does not satisfy its rule (%v)", d.Name, p.Name, p.Default, err)
					}
				}
			}
			for _, g := range d.Exclusive {
				for _, n := range g {
					if _, ok := d.Param(n); !ok {
						t.Errorf("%s: exclusive group names unknown %s", d.Name, n)
					}
				}
			}
			if d.Unguarded != "" {
				if p, ok := d.Param(d.Unguarded); !ok || p.Type != Bool {
					t.Errorf("%s: unguarded by %s, not a bool parameter", d.Name, d.Unguarded)
				}
			}
		}
	}
	if !slices.Equal(Names(Model), []string{"baseline", "bilstm", "transformer"}) {
		t.Errorf("models %v", Names(Model))
	}
}

func ExampleDescriptor_Resolve() {
	d, _ := Lookup(Mechanism, "custext")
	v, err := d.Resolve(map[string]any{"k": 50, "mapping": "aggressive"})
	fmt.Println(v.Int("k"), v.String("mapping"), v.String("score"), v.String("strategy"), err)
	_, err = d.Resolve(map[string]any{"k": 1.5})
	fmt.Println(err)
	// Output:
	// 50 aggressive cosine token <nil>
	// custext: parameter k = 1.5, want an integer in [1, ∞)
}

// TestDocsMatchDescriptors keeps docs/config.md's parameter tables equal
// to the descriptors (XP_UPDATE_DOCS=1 rewrites them).
func TestDocsMatchDescriptors(t *testing.T) {
	const path = "../docs/config.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, k := range []Kind{Mechanism, Model, Analysis, Stage, Measure} {
		begin, end := "<!-- spec:"+string(k)+" -->\n", "<!-- /spec:"+string(k)+" -->"
		i, j := strings.Index(doc, begin), strings.Index(doc, end)
		if i < 0 || j < i {
			t.Fatalf("%s has no %s … %s section", path, begin, end)
		}
		want := "\n" + Markdown(k)
		if doc[i+len(begin):j] != want {
			if os.Getenv("XP_UPDATE_DOCS") == "1" {
				doc = doc[:i+len(begin)] + want + doc[j:]
				continue
			}
			t.Errorf("%s: the %s section differs from spec's descriptors; run XP_UPDATE_DOCS=1 go test ./spec", path, k)
		}
	}
	if os.Getenv("XP_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(doc), 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMarkdownTablesWellFormed: every row of the generated parameter
// tables has the header's number of cells, so a "|" in a parameter's
// documentation (TEM's |W|) cannot split a row.
func TestMarkdownTablesWellFormed(t *testing.T) {
	cells := func(row string) int {
		n := 0
		for i := 0; i < len(row); i++ {
			if row[i] == '|' && (i == 0 || row[i-1] != '\\') {
				n++
			}
		}
		return n
	}
	for _, k := range []Kind{Mechanism, Model, Analysis, Stage, Measure} {
		want := 0
		for _, line := range strings.Split(Markdown(k), "\n") {
			switch {
			case !strings.HasPrefix(line, "|"):
				want = 0
			case want == 0:
				want = cells(line)
			case cells(line) != want:
				t.Errorf("%s: %d cells, the header has %d: %s", k, cells(line)-1, want-1, line)
			}
		}
	}
}

// TestEveryDescriptorDocumented: each mechanism has its row in
// docs/mechanisms.md's table of mechanisms and in its candidate-set
// table, each analysis its row in docs/analyses.md's table, each stage
// is named there, and each model kind has its entry in docs/models.md: a
// kind added without its documentation fails.
func TestEveryDescriptorDocumented(t *testing.T) {
	read := func(path string) []string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(b), "\n")
	}
	rows := func(lines []string, name string) int {
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "| ") && strings.Contains(strings.SplitN(l[2:], " |", 2)[0], "`"+name+"`") {
				n++
			}
		}
		return n
	}
	mechs, analyses := read("../docs/mechanisms.md"), read("../docs/analyses.md")
	for _, n := range Names(Mechanism) {
		if got := rows(mechs, n); got < 2 {
			t.Errorf("docs/mechanisms.md: mechanism %s has %d table rows (first cell), want 2 (mechanisms, candidate sets)", n, got)
		}
	}
	for _, n := range Names(Analysis) {
		if rows(analyses, n) < 1 {
			t.Errorf("docs/analyses.md: analysis %s has no row", n)
		}
	}
	for _, n := range Names(Stage) {
		if !strings.Contains(strings.Join(analyses, "\n"), "`"+n+"`") {
			t.Errorf("docs/analyses.md: stage %s is not named", n)
		}
	}
	models := strings.Join(read("../docs/models.md"), "\n")
	for _, n := range Names(Model) {
		if !strings.Contains(models, "`model.kind: "+n+"`") {
			t.Errorf("docs/models.md: model kind %s has no entry naming it (`model.kind: %s`)", n, n)
		}
	}
}

// TestDescriptorReferences: the mechanisms an analysis is limited to and
// the analysis a stage reads exist, each with its reason.
func TestDescriptorReferences(t *testing.T) {
	for _, d := range All(Analysis) {
		for _, m := range d.Mechanisms {
			if _, err := Lookup(Mechanism, m); err != nil || d.MechanismsWhy == "" {
				t.Errorf("analysis %s: mechanism %s (%v), reason %q", d.Name, m, err, d.MechanismsWhy)
			}
		}
	}
	for _, d := range All(Stage) {
		switch d.Utility {
		case "", UtilityBaseline:
		case UtilityApply:
			if !slices.ContainsFunc(d.Params, func(p Param) bool { return p.Name == "apply" }) {
				t.Errorf("stage %s adds the utility cells of its apply modes and has no apply parameter", d.Name)
			}
		default:
			t.Errorf("stage %s: utility %q", d.Name, d.Utility)
		}
		if d.Searches && !slices.ContainsFunc(d.Params, func(p Param) bool { return p.Name == "lo" }) || d.Searches && !slices.ContainsFunc(d.Params, func(p Param) bool { return p.Name == "hi" }) {
			t.Errorf("stage %s searches ε and lacks lo or hi", d.Name)
		}
		if d.Reads == "" {
			continue
		}
		if a, err := Lookup(Analysis, d.Reads); err != nil || !a.Epsilon || d.ReadsWhy == "" {
			t.Errorf("stage %s reads %s (%v), reason %q", d.Name, d.Reads, err, d.ReadsWhy)
		}
	}
	for _, d := range All(Mechanism) {
		n := d.Noise
		if n == nil {
			continue
		}
		if _, err := Lookup(Mechanism, n.Mechanism); err != nil {
			t.Errorf("mechanism %s draws the noise of %s: %v", d.Name, n.Mechanism, err)
		}
		if n.Param != "" {
			w, err := Lookup(Mechanism, n.WithParam)
			has := func(d Descriptor) bool {
				return slices.ContainsFunc(d.Params, func(p Param) bool { return p.Name == n.Param })
			}
			if err != nil || !has(d) || !has(*w) {
				t.Errorf("mechanism %s draws the noise of %s with its %s: %v", d.Name, n.WithParam, n.Param, err)
			}
		}
	}
}
