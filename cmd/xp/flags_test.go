package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	cmds := [][]string{{"run"}, {"privatize"}, {"slurm"}, {"status"}, {"results"}, {"plot"}, {"report"}, {"paper"}, {"paper", "run"}, {"paper", "tables"}, {"doctor"}, {"smoke"}, {"version"},
		{"data"}, {"data", "list"}, {"data", "get"}, {"data", "show"}}
	listed := regexp.MustCompile(`(?m)^  ([a-z]+) `).FindAllStringSubmatch(usage, -1)
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
	cfg := fmt.Sprintf(`name: pd
data: %s
embedding:
  path: vectors.txt
analysis:
  kind: plausible-deniability
  words: 5
  draws: 20
mechanisms:
  - name: laplace
    epsilon: [5, 50]
seeds: [1]
output: %s
cache: %s
`, filepath.Join(dir, "data"), filepath.Join(dir, "out"), filepath.Join(dir, "cache"))
	if err := os.WriteFile(filepath.Join(dir, "pd.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	dry := func() string {
		t.Helper()
		var out bytes.Buffer
		if err := run(context.Background(), []string{"run", "--dry-run", filepath.Join(dir, "pd.yaml")}, &out); err != nil {
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
	if err := run(context.Background(), []string{"run", "-q", filepath.Join(dir, "pd.yaml"), "--set", "mechanisms.0.epsilon=[5]"}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out = dry()
	if !strings.Contains(out, "1 analysis cells: at most 100 lookups") || !strings.Contains(out, "estimated time: ") || strings.Contains(out, "no rate") || strings.Contains(out, "rough:") {
		t.Errorf("dry run after one analysis cell (priced by its size alone, not rough):\n%s", out)
	}
}

// TestDryRunBorrowsSameSearch: where no run on this host measured a
// mechanism, its cells are priced at the speed another mechanism with the
// same search measured (Vickrey and Mahalanobis at Laplace's), and the
// dry run says so; before, it gave no estimate at all (Xu Algorithm 2,
// all Vickrey, on a host that had run Laplace only). A mechanism with
// another kind of work (SanText) borrows nothing.
func TestDryRunBorrowsSameSearch(t *testing.T) {
	dir := t.TempDir()
	if _, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 10, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(fmt.Sprintf(body, filepath.Join(dir, "data"), filepath.Join(dir, "out-"+name), filepath.Join(dir, "cache"))), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	analysisCfg := write("pd.yaml", `name: pd
data: %s
embedding:
  path: vectors.txt
analysis:
  kind: plausible-deniability
  words: 5
  draws: 20
mechanisms:
  - name: laplace
    epsilon: [5]
  - name: vickrey
    epsilon: [5]
    params: {t: 0.5}
seeds: [1]
output: %s
cache: %s
`)
	utilityCfg := write("ut.yaml", `name: ut
data: %s
dataset:
  name: folder
  path: corpus
embedding:
  path: vectors.txt
mechanisms:
  - name: laplace
    epsilon: [5]
  - name: mahalanobis
    epsilon: [5]
  - name: santext
    epsilon: [5]
apply: [train]
model:
  kind: baseline
train:
  epochs: 1
seeds: [1]
output: %s
cache: %s
`)
	dry := func(cfg string) string {
		t.Helper()
		var out bytes.Buffer
		if err := run(context.Background(), []string{"run", "--dry-run", cfg}, &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	for _, c := range []struct {
		cfg, measure string
		want         []string
		not          []string
	}{
		{analysisCfg, "mechanisms=[{name: laplace, epsilon: [5]}]", []string{"estimated time: ", "borrowed: ", "privatize vickrey on ", "at the rate of analysis plausible-deniability laplace on "}, []string{"no rate", "no time estimate"}},
		// (SanText borrows nothing: the dry run measures its rate on a
		// sample, as the training's where the measuring run's training
		// took no measurable time)
		{utilityCfg, "mechanisms=[{name: laplace, epsilon: [5]}]", []string{"borrowed: ", "privatize mahalanobis on ", "at the rate of privatize laplace on ", "measured by this dry run on small samples", "privatize santext on "},
			[]string{"santext on 40×8 int8 at the rate of"}},
	} {
		if err := run(context.Background(), []string{"run", "-q", c.cfg, "--set", c.measure}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		dropTrainingRates(t, filepath.Join(dir, "cache", "rates.json"))
		out := dry(c.cfg)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", filepath.Base(c.cfg), w, out)
			}
		}
		for _, w := range c.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q in\n%s", filepath.Base(c.cfg), w, out)
			}
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "borrowed: ") && strings.Contains(line, "santext") {
				t.Errorf("%s: SanText borrowed a rate: %s", filepath.Base(c.cfg), line)
			}
		}
	}
	// Rates recorded on another of the CPU's scoring paths (an older xp
	// took the float32 kernel where this one takes int8-avx2) price the
	// work too, said so, where none was recorded on this one.
	rf := filepath.Join(dir, "cache", "rates.json")
	b, err := os.ReadFile(rf)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`on \d+×\d+ ([a-z0-9-]+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no search shape in %s", b)
	}
	path, other := string(m[1]), "float32"
	if path == other {
		other = "float32-kernel"
	}
	moved := regexp.MustCompile(`(on \d+×\d+ )`+regexp.QuoteMeta(path)+`([" ])`).ReplaceAll(b, []byte("${1}"+other+"${2}"))
	if bytes.Contains(moved, []byte(" "+path+`"`)) || bytes.Contains(moved, []byte(" "+path+" ")) {
		t.Fatalf("rates still on %s: %s", path, moved)
	}
	if err := os.WriteFile(rf, moved, 0o644); err != nil {
		t.Fatal(err)
	}
	out := dry(analysisCfg)
	for _, w := range []string{"estimated time: ", "borrowed: ", "another scoring path", "at the rate of analysis plausible-deniability laplace on "} {
		if !strings.Contains(out, w) {
			t.Errorf("rates on %s, this host's path %s: no %q in\n%s", other, path, w, out)
		}
	}
	if !strings.Contains(out, " "+other) || strings.Contains(out, "no time estimate") || strings.Contains(out, "no rate") {
		t.Errorf("rates on %s, this host's path %s: not priced from them:\n%s", other, path, out)
	}
}

// dropTrainingRates removes the training rates from the rates file f, as
// a training too quick to time leaves them out: the missing rates are
// then listed beside the others.
func dropTrainingRates(t *testing.T, f string) {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	for _, rates := range all {
		for k := range rates {
			if strings.HasPrefix(k, "train ") {
				delete(rates, k)
			}
		}
	}
	if b, err = json.Marshal(all); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDryRunSaysQueryAttackIsRough: a query attack's cells priced from
// another cell's rate are said to be rough (their vote's cost follows
// each word's probability at its ε: CusText Table 8 from its quick look
// came out 0.18–0.26 of the time, docs/performance.md), with their share of the time.
func TestDryRunSaysQueryAttackIsRough(t *testing.T) {
	dir := t.TempDir()
	if _, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 10, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "qa.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`name: qa
data: %s
dataset:
  name: folder
  path: corpus
embedding:
  path: vectors.txt
analysis:
  kind: query-attack
  list: [good1, bad2]
mechanisms:
  - name: custext
    epsilon: [1, 2]
    params: {k: 3}
seeds: [1]
output: %s
cache: %s
`, filepath.Join(dir, "data"), filepath.Join(dir, "out"), filepath.Join(dir, "cache"))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"run", "-q", cfg, "--set", "mechanisms.0.epsilon=[1]", "--set", "analysis.list=[good1]"}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"run", "--dry-run", cfg}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "estimated time: ") || !strings.Contains(out.String(), "for 2 cells priced from other cells' rates (query-attack cells: the vote's cost") {
		t.Errorf("dry run of a query attack priced from its quick look:\n%s", out.String())
	}
}

// TestDryRunPricesConstruction: a dry run prices building CusText's
// mapping once per setting the cache does not hold, and not at all for
// one an earlier run built; a setting never built is priced at the time
// another setting of the mechanism took.
func TestDryRunPricesConstruction(t *testing.T) {
	dir := t.TempDir()
	if _, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 10, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "map.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`name: map
data: %s
dataset:
  name: folder
  path: corpus
embedding:
  path: vectors.txt
analysis:
  kind: mapping
mechanisms:
  - name: custext
    epsilon: [1]
    grid:
      k: [2, 3]
seeds: [1]
output: %s
cache: %s
`, filepath.Join(dir, "data"), filepath.Join(dir, "out"), filepath.Join(dir, "cache"))), 0o644); err != nil {
		t.Fatal(err)
	}
	dry := func() string {
		t.Helper()
		var out bytes.Buffer
		if err := run(context.Background(), []string{"run", "--dry-run", cfg}, &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if out := dry(); !strings.Contains(out, "construct custext k=2 on ") || !strings.Contains(out, "construct custext k=3 on ") {
		t.Errorf("dry run before any mapping is built:\n%s", out)
	}
	if err := run(context.Background(), []string{"run", "-q", cfg, "--set", "mechanisms.0.grid.k=[2]"}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	// K = 3's mapping, never built, is priced at K = 2's time: the dry
	// run has a rate for everything it will do.
	if out := dry(); strings.Contains(out, "construct custext k=") || !strings.Contains(out, "estimated time: ") {
		t.Errorf("dry run after K = 2 was built (its mapping cached, K = 3's priced at K = 2's time):\n%s", out)
	}
}

// TestDryRunPricesStages: a dry run prices an epsilon-search stage's
// probes (2 targets × 2 words × (13 probes × 200 draws + the examples' 5),
// 13 = both ends and halvings of [0.01, 10⁴] on log ε to 1%) until a run
// has recorded the stage's result.
func TestDryRunPricesStages(t *testing.T) {
	dir := t.TempDir()
	if _, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 10, Epochs: 1, Epsilon: []float64{1}, Seeds: []int{1}}); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`name: es
data: %s
embedding:
  path: vectors.txt
analysis:
  kind: examples
  list: [good1, bad2]
  draws: 5
mechanisms:
  - name: laplace
    epsilon: [1]
stages:
  - kind: epsilon-search
    targets: [0.2, 0.6]
    draws: 200
seeds: [1]
output: %s
cache: %s
`, filepath.Join(dir, "data"), filepath.Join(dir, "out"), filepath.Join(dir, "cache"))
	path := filepath.Join(dir, "es.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
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
	if out := dry(); !strings.Contains(out, "1 stage results to search: about 8020 lookups") {
		t.Errorf("dry run before: no stage priced in\n%s", out)
	}
	if err := run(context.Background(), []string{"run", "-q", path}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if out := dry(); strings.Contains(out, "stage results") {
		t.Errorf("dry run after the stage ran prices it again:\n%s", out)
	}
	// The finished result recorded its rate: a new output is priced from it.
	var out bytes.Buffer
	if err := run(context.Background(), []string{"run", "--dry-run", path, "--set", "output=" + filepath.Join(dir, "other")}, &out); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "1 stage results to search") || !strings.Contains(s, "estimated time: ") || strings.Contains(s, "no rate") {
		t.Errorf("dry run into a new output:\n%s", s)
	}
}
