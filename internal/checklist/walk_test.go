package checklist

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// check names one test: its package (as go test takes it) and its name.
type check struct{ pkg, test string }

func (c check) String() string { return c.test + " (" + c.pkg + ")" }

// item is one entry of a checklist as the walk performs it, and the tests
// that fail while it alone is missing (the names in brackets in
// docs/extending.md).
type item struct {
	what   string
	do     func(w *walker) error
	guards []check
}

// list is a checklist of docs/extending.md (its section's heading), the
// items a throwaway kind needs, and the tests that must pass once every
// item is done beside the guards: those the section says the kind joins
// by itself.
type list struct {
	section string
	items   []*item
	after   []check
}

// lists are the checklists walked: a mechanism (Laplace under another
// name), an analysis (the neighbours analysis under another name), a
// stage (utility-loss), a classifier (the baseline) and a dataset
// (SST-2's spec, loader included), each kind a copy of an existing one.
var lists = []list{
	{section: "A mechanism",
		items: []*item{
			descriptor("mechanism", "mechanisms", `{Kind: Mechanism, Name: "walk-copy", Doc: "Laplace under another name (the checklist walk's throwaway)", Notion: MetricDP, Epsilon: true}`,
				check{"./mech", "TestEveryDescriptorBuilt"}),
			kindFile("mechanism", "mech/walk_copy.go", "var walkCopyKind = kind{name: \"walk-copy\", search: true, build: laplaceKind.build}",
				"mech/registry.go", topVar("kinds"), "walkCopyKind", check{"./mech", "TestEveryDescriptorBuilt"}),
			tableCase("the mechanism's case in analysis/audit_test.go", "analysis/audit_test.go", inFunc("TestAuditEveryMechanism", "cases"), `{"walk-copy", nil, false}`,
				check{"./analysis", "TestAuditEveryMechanism"}),
			rows("mechanism", "docs/mechanisms.md", "laplace", "walk-copy"),
			docName("mechanism", "mech", "walk-copy", check{"./mech", "TestPackageDocNamesEveryKind"}),
			makeDocs,
		},
		after: []check{{"./runner", "TestEveryAnalysisEveryMechanism"}, {"./cmd/xp", "TestNoSwitchOverKinds"}}},
	{section: "An analysis",
		items: []*item{
			descriptor("analysis", "analyses", `{Kind: Analysis, Name: "walk-stats", Doc: "the neighbours analysis under another name (the checklist walk's throwaway)",
		Params: []Param{
			{Name: "k", Type: Ints, MinLen: 1, Min: Incl(1), Default: []int{1, 5}, Doc: "neighbour ranks"},
			{Name: "percentiles", Type: Floats, MinLen: 1, Min: Incl(0), Max: Incl(100), Default: []float64{50}, Doc: "percentiles over the words"},
			{Name: "words", Type: Int, Min: Incl(0), Default: 0, Doc: "words sampled (0: every candidate)"},
		}}`, check{"./analysis", "TestPackageDoc"}),
			kindFile("analysis", "analysis/walk_stats.go", "var walkStatsKind = kind{name: \"walk-stats\", run: neighboursKind.run, plan: neighboursKind.plan}",
				"analysis/analysis.go", topVar("kinds"), "walkStatsKind", check{"./analysis", "TestPackageDoc"}),
			tableCase("the analysis's case in TestPlanMatchesLookups", "analysis/plan_test.go", inFunc("TestPlanMatchesLookups", "cases"), `"walk-stats": {"words": 12, "k": []int{1, 5}}`,
				check{"./analysis", "TestPlanMatchesLookups"}),
			rows("analysis", "docs/analyses.md", "neighbours", "walk-stats"),
			docName("analysis", "analysis", "walk-stats", check{"./analysis", "TestPackageDoc"}),
			makeDocs,
		},
		after: []check{{"./runner", "TestEveryAnalysisEveryMechanism"}, {"./cmd/xp", "TestNoSwitchOverKinds"}}},
	{section: "A stage",
		items: []*item{
			descriptor("stage", "stages", `{Kind: Stage, Name: "walk-loss", Utility: UtilityApply, Pairs: true, Doc: "utility-loss under another name (the checklist walk's throwaway)",
		Params: []Param{
			{Name: "apply", Type: Strings, Enum: []string{"train", "test", "both"}, MinLen: 1, Default: []string{"both"}, Doc: "where the mechanism applies"},
		}}`, check{"./runner", "TestEveryStageRun"}),
			kindFile("stage", "runner/stage_walk_loss.go", "var walkLossStage = stageKind{name: \"walk-loss\", jobs: utilityLossStage.jobs}",
				"runner/stages.go", topVar("stageKinds"), "walkLossStage", check{"./runner", "TestEveryStageRun"}),
			rows("stage", "docs/analyses.md", "utility-loss", "walk-loss"),
			makeDocs,
		},
		after: []check{{"./spec", "TestDescriptorReferences"}, {"./cmd/xp", "TestNoSwitchOverKinds"}}},
	{section: "A classifier",
		items: []*item{
			descriptor("classifier", "models", `{Kind: Model, Name: "walk-mean", Doc: "the baseline under another name (the checklist walk's throwaway)", Dataset: true, Params: modelCommon}`,
				check{"./models", "TestRegistry"}),
			kindFile("classifier", "models/walk_mean.go", "var walkMeanKind = kind{name: \"walk-mean\", build: baselineKind.build}",
				"models/registry.go", topVar("kinds"), "walkMeanKind", check{"./models", "TestRegistry"}),
			{what: "the classifier's entry in docs/models.md",
				do: func(w *walker) error {
					return w.insertBefore("docs/models.md", "- **Bert** (`model.kind: transformer`)", "- **Walk** (`model.kind: walk-mean`): the baseline under another name.\n")
				},
				guards: []check{{"./spec", "TestEveryDescriptorDocumented"}}},
			makeDocs,
		},
		after: []check{{"./cmd/xp", "TestNoSwitchOverKinds"}}},
	{section: "A dataset",
		items: []*item{
			kindFile("dataset", "datasets/walk_sst.go", "var walkSSTSpec = func() Spec { s := sst2Spec; s.Name = \"walk-sst\"; return s }()",
				"datasets/load.go", returnedIn("Specs"), "walkSSTSpec", check{"./datasets/catalog", "TestCatalogWellFormed"}, check{"./datasets", "TestSpecsDocumented"}),
			tableCase("the dataset's catalog entry", "datasets/catalog/catalog.go", returnedIn("All"),
				`{Name: "walk-sst", Kind: "dataset", Title: "GLUE SST-2 under another name (the checklist walk's throwaway)", Files: []File{{Path: "sst2/SST-2.zip"}}, Dataset: "walk-sst"}`,
				check{"./datasets/catalog", "TestEveryCorpusCatalogued"}),
			{what: "the dataset's row in docs/data.md",
				do: func(w *walker) error {
					return w.insertBefore("docs/data.md", "| qnli |", "| walk-sst | as sst2 | as sst2 | negative, positive |\n")
				},
				guards: []check{{"./datasets", "TestSpecsDocumented"}}},
		},
		after: []check{{"./cmd/xp", "TestNoSwitchOverKinds"}}},
}

// descriptor is the item that adds a kind's descriptor (lit, Go source)
// to spec/registry.go's list of its kind (list).
func descriptor(kind, list, lit string, guards ...check) *item {
	return &item{what: "the " + kind + "'s descriptor in spec/registry.go", guards: guards,
		do: func(w *walker) error { return w.addElem("spec/registry.go", topVar(list), lit) }}
}

// kindFile is the item that writes a kind's own file, declaring value
// (decl, Go source), and adds value to the list that listed finds in
// registry.
func kindFile(kind, file, decl, registry string, listed finder, value string, guards ...check) *item {
	pkg := filepath.Base(filepath.Dir(file))
	return &item{what: "the " + kind + "'s file with its value, listed in " + registry, guards: guards,
		do: func(w *walker) error {
			if err := w.create(file, "package "+pkg+"\n\n// The checklist walk's throwaway.\n"+decl+"\n"); err != nil {
				return err
			}
			return w.addElem(registry, listed, value)
		}}
}

// tableCase is the item that adds elem (Go source) to the literal find
// picks in file: a test's case, a catalog entry.
func tableCase(what, file string, find finder, elem string, guards ...check) *item {
	return &item{what: what, guards: guards, do: func(w *walker) error { return w.addElem(file, find, elem) }}
}

// rows is the item that copies a documented kind's table rows (copyRows)
// for the throwaway; TestEveryDescriptorDocumented asks for them.
func rows(kind, doc, from, to string) *item {
	return &item{what: "the " + kind + "'s rows in " + doc, guards: []check{{"./spec", "TestEveryDescriptorDocumented"}},
		do: func(w *walker) error { return w.copyRows(doc, from, to) }}
}

// docName is the item that names the throwaway in brackets in its
// package's doc.go.
func docName(kind, pkg, name string, guards ...check) *item {
	return &item{what: "the " + kind + "'s name in " + pkg + "/doc.go", guards: guards,
		do: func(w *walker) error {
			return w.insertBefore(pkg+"/doc.go", "package "+pkg+"\n", "//\n// The checklist walk's throwaway ("+name+").\n")
		}}
}

// makeDocs is the checklists' last item, one for all: what `make docs`
// runs to regenerate docs/config.md's parameter tables.
var makeDocs = &item{what: "make docs", do: runMakeDocs, guards: []check{{"./spec", "TestDocsMatchDescriptors"}}}

func runMakeDocs(w *walker) error {
	if err := w.track("docs/config.md"); err != nil { // what it writes
		return err
	}
	_, err := w.goCmd([]string{"XP_UPDATE_DOCS=1"}, "test", "-count=1", "./spec", "-run", "^TestDocsMatchDescriptors$")
	return err
}

// TestChecklistWalk walks docs/extending.md's checklists for a
// mechanism, an analysis, a stage, a classifier and a dataset in a
// temporary copy of the module, one throwaway kind of each: with every item of every list done, the tests the lists name
// pass; with any one item left out, the tests named for it fail. The
// tests a section names are exactly those the walk checks for its list,
// so that neither the list nor its tests can change without the other.
// The kinds are added together (their lists share make docs), so that
// the tests they join by themselves are built once.
func TestChecklistWalk(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command to build the copy with: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "extending.md"))
	if err != nil {
		t.Fatal(err)
	}
	var items []*item // every list's, once each, a shared one where it comes last
	var walked []check
	for _, l := range lists {
		named := testsNamed(string(doc), l.section)
		if named == nil {
			t.Fatalf("docs/extending.md has no section %q", l.section)
		}
		checks := slices.Clone(l.after)
		for _, it := range l.items {
			checks = append(checks, it.guards...)
			items = append(slices.DeleteFunc(items, func(x *item) bool { return x == it }), it)
		}
		var names []string
		for _, c := range checks {
			names = append(names, c.test)
			if !slices.Contains(walked, c) {
				walked = append(walked, c)
			}
		}
		slices.Sort(names)
		if names = slices.Compact(names); !slices.Equal(names, named) {
			t.Errorf("docs/extending.md's %q names the tests %v; the walk checks %v", l.section, named, names)
		}
	}
	w := &walker{root: t.TempDir(), orig: map[string][]byte{}}
	if err := copyModule(root, w.root); err != nil {
		t.Fatal(err)
	}
	for i, it := range items {
		if err := w.apply(items, i); err != nil {
			t.Fatalf("without %s: %v", it.what, err)
		}
		got, err := w.run(it.guards)
		if err != nil {
			t.Fatalf("without %s: %v", it.what, err)
		}
		for _, c := range it.guards {
			if got[c].action != "fail" {
				t.Errorf("with every item but %s, %s: %s, want it to fail\n%s", it.what, c, cmp.Or(got[c].action, "did not run"), got[c].output)
			}
		}
	}
	if err := w.apply(items, -1); err != nil {
		t.Fatalf("every item: %v", err)
	}
	got, err := w.run(walked)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range walked {
		if got[c].action != "pass" {
			t.Errorf("with every item done, %s: %s, want it to pass\n%s", c, cmp.Or(got[c].action, "did not run"), got[c].output)
		}
	}
}

// testsNamed are the test names in the section of docs/extending.md
// under the heading "## " + heading, sorted and without repeats; nil
// without the section.
func testsNamed(doc, heading string) []string {
	_, rest, ok := strings.Cut(doc, "\n## "+heading+"\n")
	if !ok {
		return nil
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	names := regexp.MustCompile(`\bTest[A-Z]\w*`).FindAllString(rest, -1)
	slices.Sort(names)
	return slices.Compact(names)
}

// copyModule copies what building and testing the module reads — its Go
// files, go.mod and go.sum, docs, testdata and embedded files — from
// root to dst, leaving out run folders, records, build outputs and hidden
// folders; and a go.work whose replacements point at root's (the
// libtorch binding make torch writes).
func copyModule(root, dst string) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || slices.Contains([]string{"build", "bin", "runs", "records", "node_modules"}, rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || rel == "go.work" {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 4<<20 {
			return err // large files are data or binaries, never sources
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		return err
	}
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		return err
	}
	work = regexp.MustCompile(`=> \./`).ReplaceAll(work, []byte("=> "+filepath.ToSlash(root)+"/"))
	return os.WriteFile(filepath.Join(dst, "go.work"), work, 0o644)
}

// walker edits the copy at root, remembering each file as it was so that
// every state of a walk starts from the copy as made.
type walker struct {
	root    string
	orig    map[string][]byte // a file's contents before the walk first changed it; nil: created by the walk
	pending []string          // files changed since the last reset
}

// apply resets the copy and does every item but the skip-th (-1: all).
func (w *walker) apply(items []*item, skip int) error {
	for _, rel := range w.pending {
		p := filepath.Join(w.root, rel)
		var err error
		if b := w.orig[rel]; b == nil {
			err = os.Remove(p)
		} else {
			err = os.WriteFile(p, b, 0o644)
		}
		if err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	w.pending = nil
	for i, it := range items {
		if i == skip {
			continue
		}
		if err := it.do(w); err != nil {
			return fmt.Errorf("%s: %w", it.what, err)
		}
	}
	return nil
}

// track notes that the copy's file rel is about to change, so that the
// next reset restores it.
func (w *walker) track(rel string) error {
	if _, ok := w.orig[rel]; !ok {
		old, err := os.ReadFile(filepath.Join(w.root, rel))
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		w.orig[rel] = old
	}
	if !slices.Contains(w.pending, rel) {
		w.pending = append(w.pending, rel)
	}
	return nil
}

// write replaces the copy's file rel with b.
func (w *walker) write(rel string, b []byte) error {
	if err := w.track(rel); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(w.root, rel), b, 0o644)
}

func (w *walker) read(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(w.root, rel)) }

func (w *walker) create(rel, text string) error { return w.write(rel, []byte(text)) }

// insertBefore inserts text before the first occurrence of marker.
func (w *walker) insertBefore(rel, marker, text string) error {
	b, err := w.read(rel)
	if err != nil {
		return err
	}
	i := bytes.Index(b, []byte(marker))
	if i < 0 {
		return fmt.Errorf("%s has no %q", rel, marker)
	}
	return w.write(rel, slices.Concat(b[:i], []byte(text), b[i:]))
}

// copyRows adds, after each table row of the Markdown file whose first
// cell names from (in backquotes), the same row with only to in its
// first cell.
func (w *walker) copyRows(rel, from, to string) error {
	b, err := w.read(rel)
	if err != nil {
		return err
	}
	var out []string
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		out = append(out, l)
		first, rest, ok := strings.Cut(strings.TrimPrefix(l, "| "), " |")
		if strings.HasPrefix(l, "| ") && ok && strings.Contains(first, "`"+from+"`") {
			out = append(out, "| `"+to+"` |"+rest)
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("%s has no row of %s", rel, from)
	}
	return w.write(rel, []byte(strings.Join(out, "\n")))
}

// A finder picks a composite literal of a parsed file.
type finder func(f *ast.File) *ast.CompositeLit

// topVar finds the literal a package-level variable is declared with.
func topVar(name string) finder {
	return func(f *ast.File) *ast.CompositeLit {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				v := s.(*ast.ValueSpec)
				for i, n := range v.Names {
					if n.Name == name && i < len(v.Values) {
						lit, _ := v.Values[i].(*ast.CompositeLit)
						return lit
					}
				}
			}
		}
		return nil
	}
}

// inFunc finds the literal assigned to name (:=) in the function fn.
func inFunc(fn, name string) finder {
	return litIn(fn, func(n ast.Node) *ast.CompositeLit {
		if a, ok := n.(*ast.AssignStmt); ok && len(a.Lhs) == 1 && len(a.Rhs) == 1 {
			if id, ok := a.Lhs[0].(*ast.Ident); ok && id.Name == name {
				lit, _ := a.Rhs[0].(*ast.CompositeLit)
				return lit
			}
		}
		return nil
	})
}

// returnedIn finds the literal the function fn returns.
func returnedIn(fn string) finder {
	return litIn(fn, func(n ast.Node) *ast.CompositeLit {
		if r, ok := n.(*ast.ReturnStmt); ok && len(r.Results) == 1 {
			lit, _ := r.Results[0].(*ast.CompositeLit)
			return lit
		}
		return nil
	})
}

// litIn finds the first literal pick returns for a node of the function
// fn.
func litIn(fn string, pick func(ast.Node) *ast.CompositeLit) finder {
	return func(f *ast.File) *ast.CompositeLit {
		var lit *ast.CompositeLit
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == fn {
				ast.Inspect(fd, func(n ast.Node) bool {
					if lit == nil {
						lit = pick(n)
					}
					return lit == nil
				})
			}
		}
		return lit
	}
}

// addElem appends elem, Go source, to the literal find picks in rel.
func (w *walker) addElem(rel string, find finder, elem string) error {
	b, err := w.read(rel)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, b, parser.ParseComments)
	if err != nil {
		return err
	}
	lit := find(f)
	if lit == nil {
		return fmt.Errorf("%s: the literal to add %s to is not there", rel, elem)
	}
	at := fset.Position(lit.Rbrace).Offset
	ins := ", " + elem
	switch {
	case len(lit.Elts) == 0:
		ins = elem
	case fset.Position(lit.Elts[len(lit.Elts)-1].End()).Line < fset.Position(lit.Rbrace).Line:
		ins = elem + ",\n" // a literal of one element per line ends with a comma
	}
	return w.write(rel, slices.Concat(b[:at], []byte(ins), b[at:]))
}

// goCmd runs the go command in the copy, env added to the test's.
func (w *walker) goCmd(env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = w.root
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("go %s: %w\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out, nil
}

// outcome is what go test said of one test: pass, fail or skip ("": it
// did not run), and its output.
type outcome struct {
	action string
	output string
}

// run runs the checks' tests in the copy, each once, and reads their
// outcomes from go test's JSON; a package that does not build leaves its
// tests without one, its compiler's words in the output.
func (w *walker) run(checks []check) (map[check]outcome, error) {
	var pkgs, tests []string
	for _, c := range checks {
		if !slices.Contains(pkgs, c.pkg) {
			pkgs = append(pkgs, c.pkg)
		}
		if !slices.Contains(tests, c.test) {
			tests = append(tests, c.test)
		}
	}
	args := append([]string{"test", "-json", "-count=1", "-run", "^(" + strings.Join(tests, "|") + ")$"}, pkgs...)
	out, err := w.goCmd(nil, args...)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, err // go could not run; a failing test exits 1, which is an answer
	}
	got := map[check]outcome{}
	var build strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e struct{ Action, Package, Test, Output string }
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if e.Test == "" {
			if e.Action == "output" || e.Action == "build-output" {
				build.WriteString(e.Output)
			}
			continue
		}
		for _, c := range checks {
			if c.test != strings.Split(e.Test, "/")[0] || !strings.HasSuffix(e.Package, strings.TrimPrefix(c.pkg, ".")) {
				continue
			}
			o := got[c]
			switch e.Action {
			case "output":
				o.output += e.Output
			case "pass", "fail", "skip":
				if e.Test == c.test {
					o.action = e.Action
				}
			}
			got[c] = o
		}
	}
	for _, c := range checks {
		if got[c].action == "" {
			o := got[c]
			o.output += build.String()
			if err != nil {
				o.output += err.Error()
			}
			got[c] = o
		}
	}
	return got, nil
}
