package main

import (
	"archive/zip"
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/torchrt"
)

// TestHelpExitsZero: -h and --help on every command (every one the usage
// lists) and data subcommand print the command's usage to stdout and
// exit 0 (xp run -h exited 1 with "flag: help requested").
func TestHelpExitsZero(t *testing.T) {
	cmds := [][]string{{"run"}, {"privatize"}, {"slurm"}, {"status"}, {"results"}, {"plot"}, {"report"}, {"paper"}, {"paper", "run"}, {"paper", "tables"}, {"model"}, {"model", "check"}, {"doctor"}, {"smoke"}, {"version"},
		{"data"}, {"data", "list"}, {"data", "get"}, {"data", "show"}}
	listed := regexp.MustCompile(`(?m)^  ([a-z]+) `).FindAllStringSubmatch(usage(), -1)
	for _, m := range listed {
		if m[1] != "help" && !slices.ContainsFunc(cmds, func(c []string) bool { return c[0] == m[1] }) {
			t.Errorf("command %s is in the usage but not tested here", m[1])
		}
	}
	for _, c := range cmds {
		for _, h := range []string{"-h", "--help"} {
			cmd := xpCommand(append(slices.Clone(c), h)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if err != nil || !strings.Contains(stdout.String(), "usage: xp "+c[0]) || stderr.Len() > 0 {
				t.Errorf("xp %s %s: %v\nstdout: %s\nstderr: %s", strings.Join(c, " "), h, err, stdout.String(), stderr.String())
			}
		}
	}
}

// TestFlagsAfterArguments: every command takes its flags before or after
// its positional arguments alike.
func TestFlagsAfterArguments(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 5, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", cfg, "--dry-run", "--set", "train.epochs=1"},
		{"run", "--dry-run", cfg, "--set", "train.epochs=1"},
		{"privatize", cfg, "--split", "test", "--set", "train.epochs=1"},
		{"slurm", cfg, "--set", "train.epochs=1", "--partition", "p"},
	} {
		var out bytes.Buffer
		if err := run(context.Background(), args, &out); err != nil {
			t.Errorf("xp %s: %v", strings.Join(args, " "), err)
		}
	}
	// The run folder commands, on a folder without records: the flag is
	// taken (the error is about the folder, not the flag).
	for _, args := range [][]string{{"results", dir, "--csv"}, {"status", dir}} {
		err := run(context.Background(), args, &bytes.Buffer{})
		if err != nil && strings.Contains(err.Error(), "flag") {
			t.Errorf("xp %s: %v", strings.Join(args, " "), err)
		}
	}
}

// TestDryRunWritesNothing: a dry run creates no file or folder (it
// created the output folder and a 52 MB embedding cache), names its
// folders by absolute paths, honours --shard, and counts the
// privatizations and trainings to do; after a real run of part of the
// sweep it estimates the rest from the rates that run recorded.
func TestDryRunWritesNothing(t *testing.T) {
	dir := t.TempDir()
	_, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 10, Epochs: 1, Epsilon: []float64{5, 50}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	files := func() []string {
		var all []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			all = append(all, p)
			return nil
		})
		return all
	}
	before := files()
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir) // relative paths in the config resolve to absolute ones
	dry := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := run(context.Background(), append([]string{"run", "--dry-run", "xp.yaml"}, args...), &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	out := dry()
	if after := files(); !slices.Equal(before, after) {
		t.Errorf("the dry run wrote: %v", slices.DeleteFunc(after, func(p string) bool { return slices.Contains(before, p) }))
	}
	// 1 baseline + 2 ε × 2 modes; 2 ε × (train, valid, test) splits; 1 clean + 2 privatized models.
	for _, want := range []string{"output  " + filepath.Join(dir, "out") + "\n", "cache   " + filepath.Join(dir, "cache") + "\n",
		"5 cells in 3 groups: 0 cached, 5 to run\n", "to compute: 6 privatized splits", "3 models to train",
		"measured by this dry run on small samples", "privatize laplace on ", "dry run: nothing was run or written"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run: no %q in\n%s", want, out)
		}
	}
	// The opt-in privacy measures are counted: 6 privatized splits, 5 word
	// types × 10 draws each at most.
	if out := dry("--set", "privacy={top: 5, draws: 10}"); !strings.Contains(out, "privacy measures of 6 privatized splits: at most 300 lookups") {
		t.Errorf("dry run with privacy measures:\n%s", out)
	}
	if out := dry("--shard", "1/2"); !strings.Contains(out, "in shard 1/2") || !strings.Contains(out, "other-shard") {
		t.Errorf("--shard 1/2:\n%s", out)
	}
	// Run the baseline and ε=5, then the dry run of the whole sweep prices
	// what is left at the rates measured.
	if err := run(context.Background(), []string{"run", "-q", "xp.yaml", "--set", "mechanisms.0.epsilon=[5]"}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out = dry()
	for _, want := range []string{"5 cells in 3 groups: 3 cached, 2 to run\n", "to compute: 3 privatized splits", "1 models to train", "estimated time: "} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run after a partial run: no %q in\n%s", want, out)
		}
	}
}

// TestZipMemberEmbedding: xp run reads embedding.path "x.zip#member" as
// xp privatize does (GloVe ships as zips), with the same numbers as the
// unzipped file.
func TestZipMemberEmbedding(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 10, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	vec, err := os.ReadFile(filepath.Join(dir, "data", "vectors.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Create(filepath.Join(dir, "data", "glove.zip"))
	zw := zip.NewWriter(f)
	w, _ := zw.Create("glove/vectors.txt")
	w.Write(vec)
	zw.Close()
	f.Close()
	table := func(sets ...string) string {
		var out bytes.Buffer
		args := append([]string{"run", "-q", cfg, "--set", "apply=[test]"}, sets...)
		if err := run(context.Background(), args, &out); err != nil {
			t.Fatalf("xp %s: %v", strings.Join(args, " "), err)
		}
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "| laplace") {
				return l
			}
		}
		t.Fatalf("no laplace row in\n%s", out.String())
		return ""
	}
	plain := table("--set", "output="+filepath.Join(dir, "plain"))
	zipped := table("--set", "output="+filepath.Join(dir, "zipped"), "--set", "embedding.path=glove.zip#glove/vectors.txt")
	if plain != zipped || !strings.Contains(plain, "laplace") {
		t.Errorf("plain: %s\nzipped: %s", plain, zipped)
	}
}

// TestBinaryRunsFromACopy: bin/xp finds libxptorch.so relative to itself
// ($ORIGIN/../build/torch/<key>), so a copy of the clone runs on its own
// copy of the library (its run path was only the original build folder's
// absolute path).
func TestBinaryRunsFromACopy(t *testing.T) {
	lib := torchrt.Build().LibPath
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(root, filepath.Dir(lib))
	if err != nil || strings.HasPrefix(rel, "..") {
		t.Skipf("libxptorch.so (%s) is outside the clone: a custom build", lib)
	}
	clone := t.TempDir()
	bin := filepath.Join(clone, "bin", "xp")
	if b, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	copied := filepath.Join(clone, rel, filepath.Base(lib))
	os.MkdirAll(filepath.Dir(copied), 0o777)
	b, err := os.ReadFile(lib)
	if err != nil || os.WriteFile(copied, b, 0o755) != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "LD_DEBUG=libs")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the copy: %v\n%s", err, stderr.String())
	}
	loaded := ""
	for _, l := range strings.Split(stderr.String(), "\n") {
		if _, p, ok := strings.Cut(l, "calling init: "); ok && strings.HasSuffix(p, "libxptorch.so") {
			loaded = filepath.Clean(p)
		}
	}
	if loaded != copied {
		t.Errorf("the copy did not load its own %s:\n%s", copied, grepLines(stderr.String(), "libxptorch"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestPassiveOpenMP: xp runs with OMP_WAIT_POLICY=passive (re-executing
// itself: libgomp reads it at load) unless the user set a policy.
func TestPassiveOpenMP(t *testing.T) {
	for _, c := range []struct{ env, want string }{{"", "passive"}, {"OMP_WAIT_POLICY=active", "active"}} {
		cmd := xpCommand("doctor")
		var env []string
		for _, e := range cmd.Env {
			if !strings.HasPrefix(e, "OMP_WAIT_POLICY=") {
				env = append(env, e)
			}
		}
		if c.env != "" {
			env = append(env, c.env)
		}
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.Contains(string(out), "OpenMP wait:      "+c.want+"\n") {
			t.Errorf("env %q: doctor says\n%s", c.env, grepLines(string(out), "OpenMP"))
		}
	}
}

// TestDryRunPricesAnalyses: a dry run counts an analysis sweep's draws
// (analysis.Plan: words × draws) and, once a cell of the same analysis
// and mechanism has run, prices the rest at the rate it recorded.
func TestDryRunPricesAnalyses(t *testing.T) {
	dir := t.TempDir()
	_, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 10, Epochs: 1, Epsilon: []float64{5, 50}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	path, _, err := fixture.Config(dir, "pd", "analysis:\n  kind: plausible-deniability\n  words: 5\n  draws: 20\nmechanisms:\n  - name: laplace\n    epsilon: [5, 50]\nseeds: [1]\n")
	if err != nil {
		t.Fatal(err)
	}
	dry := func() string {
		t.Helper()
		var out bytes.Buffer
		if err := run(context.Background(), []string{"run", "--dry-run", path}, &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	out := dry()
	for _, want := range []string{"2 analysis cells: at most 200 lookups", "no time estimate: no rate recorded on this host for: privatize laplace on "} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run: no %q in\n%s", want, out)
		}
	}
	if err := run(context.Background(), []string{"run", "-q", path, "--set", "mechanisms.0.epsilon=[5]"}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out = dry()
	if !strings.Contains(out, "1 analysis cells: at most 100 lookups") || !strings.Contains(out, "estimated time: ") || strings.Contains(out, "no rate") || strings.Contains(out, "rough:") {
		t.Errorf("dry run after one analysis cell (priced by its size alone, not rough):\n%s", out)
	}
}

// TestCommandList: the package comment lists every command run
// dispatches on, and no other (the list was written three times, and the
// comment had lost xp model); an unknown command gets the closest name.
func TestCommandList(t *testing.T) {
	b, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(b), "package main")
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^//\txp ([a-z]+)`).FindAllStringSubmatch(head, -1) {
		documented = append(documented, m[1])
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
		if !slices.Contains(documented, c.name) {
			t.Errorf("xp %s is not in main.go's package comment", c.name)
		}
		if !strings.Contains(usage(), "  "+c.name+" ") {
			t.Errorf("xp %s is not in the usage", c.name)
		}
	}
	for _, d := range documented {
		if !slices.Contains(names, d) {
			t.Errorf("main.go's package comment lists xp %s, which is no command", d)
		}
	}
	if err := run(context.Background(), []string{"reslts"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `did you mean "results"?`) {
		t.Errorf("xp reslts: %v", err)
	}
}
