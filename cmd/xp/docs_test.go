package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/datasets"
)

// docCommand is a command line found in a code block of the docs.
type docCommand struct {
	where  string   // file:line
	args   []string // after bin/xp or xp; or make's targets
	make   bool
	inline bool // in a sentence: checked, never run
}

// inlineXP finds inline code spans that are xp command lines.
var inlineXP = regexp.MustCompile("`(?:bin/)?xp ([a-z][^`]*)`")

// docCommands extracts the xp and make command lines from the fenced and
// indented code blocks of a Markdown file: comments dropped, continuation
// lines joined, the command cut at a pipe or redirection.
func docCommands(t *testing.T, path string) []docCommand {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docCommand
	lines := strings.Split(string(b), "\n")
	fenced := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fenced = !fenced
			continue
		}
		if !fenced && !strings.HasPrefix(line, "    ") {
			// Inline code in prose: `xp cmd --flag …` is checked too
			// (never run); docs/errors.md shows wrong commands on purpose.
			if filepath.Base(path) == "errors.md" {
				continue
			}
			for _, m := range inlineXP.FindAllStringSubmatch(line, -1) {
				if f := shellFields(m[1]); len(f) > 0 {
					out = append(out, docCommand{where: path + ":" + strconv.Itoa(i+1), args: f, inline: true})
				}
			}
			continue
		}
		start := i + 1
		for strings.HasSuffix(trimmed, "\\") && i+1 < len(lines) {
			i++
			trimmed = strings.TrimSuffix(trimmed, "\\") + " " + strings.TrimSpace(lines[i])
		}
		trimmed = strings.TrimPrefix(trimmed, "$ ")
		if j := strings.Index(trimmed, " #"); j >= 0 {
			trimmed = trimmed[:j]
		}
		for _, cut := range []string{" | ", " > ", " && ", "; "} {
			if j := strings.Index(trimmed, cut); j >= 0 {
				trimmed = trimmed[:j]
			}
		}
		fields := shellFields(trimmed)
		where := path + ":" + strconv.Itoa(start)
		switch {
		case len(fields) > 1 && (fields[0] == "bin/xp" || fields[0] == "xp"):
			out = append(out, docCommand{where: where, args: fields[1:]})
		case len(fields) > 1 && fields[0] == "make":
			out = append(out, docCommand{where: where, args: fields[1:], make: true})
		}
	}
	return out
}

// shellFields splits a command line as a shell would for plain words and
// single or double quotes.
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// flagsOf lists the flags a command accepts, from its own -h output.
func flagsOf(t *testing.T, cmd []string) []string {
	var out bytes.Buffer
	if err := run(context.Background(), append(slices.Clone(cmd), "-h"), &out); err != errHelp {
		t.Fatalf("xp %s -h: %v", strings.Join(cmd, " "), err)
	}
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(out.String(), -1) {
		flags = append(flags, m[1])
	}
	return flags
}

// cheap are the documented commands the docs test runs (seconds each);
// every other one is only checked for its command and flags (downloads,
// sweeps, benchmarks never run in tests).
func cheap(args []string) bool {
	switch {
	case args[0] == "help" || args[0] == "doctor" || args[0] == "version":
		return true
	case args[0] == "data" && len(args) > 1 && (args[1] == "show" || args[1] == "list" && !slices.Contains(args, "-sum")):
		return true
	case args[0] == "run" && slices.Contains(args, "--dry-run"):
		_, err := os.Stat(filepath.Join("..", "..", args[len(args)-1]))
		return err == nil // a real config, not a placeholder
	}
	return false
}

// TestDocumentedCommands: every xp and make command line in README.md and
// docs/*.md names an existing command, subcommand and flags; the cheap
// ones run and succeed.
func TestDocumentedCommands(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append([]string{"../../README.md", "../../configs/README.md"}, files...)
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	commands := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z]+) `).FindAllStringSubmatch(usage(), -1) {
		commands[m[1]] = true
	}
	flagCache := map[string][]string{}
	root := datasets.RootFromEnv()
	ran, checked := 0, 0
	for _, f := range files {
		for _, c := range docCommands(t, f) {
			checked++
			if c.make {
				for _, target := range c.args {
					if !strings.Contains(target, "=") && !regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(target)+`:`).Match(makefile) {
						t.Errorf("%s: make %s: no such target in the Makefile", c.where, target)
					}
				}
				continue
			}
			if !commands[c.args[0]] {
				t.Errorf("%s: xp %s: no such command", c.where, c.args[0])
				continue
			}
			cmd := c.args[:1]
			if c.args[0] == "data" {
				if len(c.args) < 2 || !slices.Contains([]string{"list", "get", "show"}, c.args[1]) {
					t.Errorf("%s: xp %s: want data list, get or show", c.where, strings.Join(c.args, " "))
					continue
				}
				cmd = c.args[:2]
			}
			if c.args[0] == "model" {
				if len(c.args) < 2 || c.args[1] != "check" {
					t.Errorf("%s: xp %s: want model check", c.where, strings.Join(c.args, " "))
					continue
				}
				cmd = c.args[:2]
			}
			if c.args[0] == "paper" {
				if len(c.args) < 2 || !slices.Contains([]string{"run", "plan", "tables"}, c.args[1]) {
					t.Errorf("%s: xp %s: want paper run, plan or tables", c.where, strings.Join(c.args, " "))
					continue
				}
				cmd = c.args[:2]
			}
			if c.args[0] == "help" {
				continue
			}
			name := strings.Join(cmd, " ")
			if flagCache[name] == nil {
				flagCache[name] = flagsOf(t, cmd)
			}
			for _, a := range c.args[len(cmd):] {
				a = strings.Trim(a, "[]")
				if !strings.HasPrefix(a, "-") || a == "-" {
					continue
				}
				flag, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				if !slices.Contains(flagCache[name], flag) {
					t.Errorf("%s: xp %s: no flag -%s (it has %v)", c.where, name, flag, flagCache[name])
				}
			}
			if c.inline || !cheap(c.args) {
				continue
			}
			if root == "" && (c.args[0] == "data" || c.args[0] == "run") {
				t.Logf("%s: not run: no data root ($%s)", c.where, datasets.EnvRoot)
				continue
			}
			args := slices.Clone(c.args)
			last := args[len(args)-1]
			if args[0] == "run" || strings.HasSuffix(last, ".yaml") { // a config, named from the repository's root
				args[len(args)-1] = filepath.Join("..", "..", last)
				if _, err := os.Stat(args[len(args)-1]); err != nil {
					t.Logf("%s: not run: %s is an example name, not a file of the repository", c.where, last)
					continue
				}
			}
			if err := run(context.Background(), args, &bytes.Buffer{}); err != nil {
				t.Errorf("%s: xp %s: %v", c.where, strings.Join(c.args, " "), err)
			}
			ran++
		}
	}
	t.Logf("%d documented commands checked, %d run", checked, ran)
	if checked < 30 || root != "" && ran < 5 {
		t.Errorf("%d commands checked and %d run: the extraction found too few", checked, ran)
	}
}

// TestReadmeLayout: README's layout table names every top-level folder
// the repository tracks (slurm/, internal/, bench/ and scripts/ were
// missing).
func TestReadmeLayout(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(b), "## Layout")
	if !ok {
		t.Fatal("README.md has no Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	ents, err := os.ReadDir("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || slices.Contains([]string{"bin", "build", "runs"}, name) { // hidden, or what make and xp run write (git-ignored)
			continue
		}
		if !strings.Contains(layout, "`"+name+"/") {
			t.Errorf("README.md's layout does not name %s/", name)
		}
	}
}

// TestCitedTestsExist: every test, fuzz test or example a document cites
// by name (`TestX`, `FuzzX`, `ExampleX`), or a code comment cites in
// parentheses, exists, so that "this holds" followed by a test's name
// points at a check that runs.
func TestCitedTestsExist(t *testing.T) {
	defined := map[string]bool{}
	funcs := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Example)\w*)\(`)
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "build" || d.Name() == "runs" || d.Name() == "records") && path != "../.." {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range funcs.FindAllStringSubmatch(string(b), -1) {
				defined[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Code comments cite tests too, in parentheses as docs do (mech's
	// registry cited a test by a name no test had).
	inComment := regexp.MustCompile(`\(((?:Test|Fuzz|Example)[A-Z]\w*)[),:; ]`)
	err = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "build" || d.Name() == "runs" || d.Name() == "records") && path != "../.." {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			_, comment, ok := strings.Cut(line, "//")
			if !ok {
				continue
			}
			for _, m := range inComment.FindAllStringSubmatch(comment, -1) {
				if !defined[m[1]] {
					t.Errorf("%s:%d cites %s, which no test defines", path, i+1, m[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob("../../docs/*.md")
	docs = append(docs, "../../README.md", "../../configs/README.md")
	cited := regexp.MustCompile("`((?:Test|Fuzz|Example)[A-Z]\\w*)`")
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cited.FindAllStringSubmatch(string(b), -1) {
			if !defined[m[1]] {
				t.Errorf("%s cites %s, which no test defines", filepath.Base(p), m[1])
			}
		}
	}
}

// TestFuzzTargetsListed: every fuzz test in the module is one of the
// Makefile's FUZZ_TARGETS (so `make fuzz` runs it) and is named in
// docs/extending.md, and every target listed exists.
func TestFuzzTargetsListed(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^FUZZ_TARGETS :=(.*)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile has no FUZZ_TARGETS line")
	}
	listed := map[string]bool{}
	for _, tg := range strings.Fields(string(m[1])) {
		listed[tg] = true
	}
	doc, err := os.ReadFile("../../docs/extending.md")
	if err != nil {
		t.Fatal(err)
	}
	fuzz := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)
	found := map[string]bool{}
	err = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "../.." && (strings.HasPrefix(n, ".") || n == "build" || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", filepath.Dir(path))
		for _, f := range fuzz.FindAllSubmatch(b, -1) {
			target := "./" + filepath.ToSlash(rel) + ":" + string(f[1])
			found[target] = true
			if !listed[target] {
				t.Errorf("%s: %s is not in the Makefile's FUZZ_TARGETS (make fuzz)", path, target)
			}
			if !bytes.Contains(doc, []byte("`"+string(f[1])+"`")) {
				t.Errorf("%s: %s is not named in docs/extending.md", path, f[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for tg := range listed {
		if !found[tg] {
			t.Errorf("FUZZ_TARGETS lists %s, which no test file declares", tg)
		}
	}
}
