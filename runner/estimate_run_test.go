package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/torchrt"
)

// estimateDir writes the fixture's corpus and vectors (40 words, 8
// dimensions) into a new folder, and returns it with a function that
// writes a config of that name and body over them (fixture.Config: the
// folder's configs share one cache).
func estimateDir(t *testing.T) (string, func(name, body string) string) {
	t.Helper()
	dir := t.TempDir()
	if _, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 10, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}); err != nil {
		t.Fatal(err)
	}
	return dir, func(name, body string) string {
		t.Helper()
		p, _, err := fixture.Config(dir, strings.TrimSuffix(name, ".yaml"), "seeds: [1]\n"+body)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// dryRun is the estimate of a dry run of the config at path with sets.
func dryRun(t *testing.T, path string, sets ...string) *Estimate {
	t.Helper()
	c, err := experiments.Load(path, experiments.Options{Set: sets})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), c, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Estimate == nil {
		t.Fatal("a dry run without an estimate")
	}
	return sum.Estimate
}

// unknown reports whether some unpriced work's name starts with prefix.
func (e *Estimate) unknown(prefix string) bool {
	return slices.ContainsFunc(e.Unknown, func(k string) bool { return strings.HasPrefix(k, prefix) })
}

// TestEstimatePricesAnalyses: a dry run counts an analysis sweep's draws
// (analysis.Plan: words × draws) and, once a cell of the same analysis
// and mechanism has run, prices the rest at the rate it recorded.
func TestEstimatePricesAnalyses(t *testing.T) {
	_, write := estimateDir(t)
	path := write("pd.yaml", "analysis:\n  kind: plausible-deniability\n  words: 5\n  draws: 20\nmechanisms:\n  - name: laplace\n    epsilon: [5, 50]\n")
	e := dryRun(t, path)
	if e.Analyses != 2 || e.AnalysisLookups != 200 || e.Seconds != 0 || !e.unknown("privatize laplace on ") {
		t.Errorf("before any cell ran: %d analysis cells, %d lookups, %v s, unknown %q; want 2, 200, 0 and laplace's privatization", e.Analyses, e.AnalysisLookups, e.Seconds, e.Unknown)
	}
	runConfig(t, path, "mechanisms.0.epsilon=[5]")
	e = dryRun(t, path)
	if e.Analyses != 1 || e.AnalysisLookups != 100 || e.Seconds <= 0 || len(e.Unknown) > 0 || e.RoughCells > 0 {
		t.Errorf("after one analysis cell (priced by its size alone, not rough): %+v", e)
	}
}

// TestEstimateBorrowsSameSearch: where no run on this host measured a
// mechanism, its cells are priced at the speed another mechanism with the
// same search measured (Vickrey and Mahalanobis at Laplace's), and the
// estimate says so; before, it gave no estimate at all (Xu Algorithm 2,
// all Vickrey, on a host that had run Laplace only). A mechanism with
// another kind of work (SanText) borrows nothing: the dry run measures its
// rate on a sample. Rates recorded on another of the CPU's scoring paths
// (an older xp took the float32 kernel where this one takes int8-avx2)
// price the work too where none was recorded on this one.
func TestEstimateBorrowsSameSearch(t *testing.T) {
	dir, write := estimateDir(t)
	analysisCfg := write("pd.yaml", "analysis:\n  kind: plausible-deniability\n  words: 5\n  draws: 20\nmechanisms:\n  - name: laplace\n    epsilon: [5]\n  - name: vickrey\n    epsilon: [5]\n    params: {t: 0.5}\n")
	utilityCfg := write("ut.yaml", "mechanisms:\n  - name: laplace\n    epsilon: [5]\n  - name: mahalanobis\n    epsilon: [5]\n  - name: santext\n    epsilon: [5]\napply: [train]\nmodel:\n  kind: baseline\ntrain:\n  epochs: 1\n")
	rf := filepath.Join(dir, "cache", ratesFile)
	borrowed := func(e *Estimate, key, from string) bool {
		for k, b := range e.BorrowedFrom {
			if strings.HasPrefix(k, key) && strings.HasPrefix(b, from) {
				return true
			}
		}
		return false
	}
	runConfig(t, analysisCfg, "mechanisms=[{name: laplace, epsilon: [5]}]")
	dropTrainingRates(t, rf)
	e := dryRun(t, analysisCfg)
	if e.Seconds <= 0 || e.Borrowed <= 0 || len(e.Unknown) > 0 || !borrowed(e, "privatize vickrey on ", "analysis plausible-deniability laplace on ") {
		t.Errorf("vickrey's analysis at laplace's rate: %+v", e)
	}
	runConfig(t, utilityCfg, "mechanisms=[{name: laplace, epsilon: [5]}]")
	dropTrainingRates(t, rf)
	e = dryRun(t, utilityCfg)
	if e.Borrowed <= 0 || !borrowed(e, "privatize mahalanobis on ", "privatize laplace on ") {
		t.Errorf("mahalanobis at laplace's rate: %+v", e)
	}
	if !slices.ContainsFunc(e.Calibrated, func(c string) bool { return strings.HasPrefix(c, "privatize santext on ") }) {
		t.Errorf("santext's rate not measured on a sample: calibrated %q", e.Calibrated)
	}
	for k := range e.BorrowedFrom {
		if strings.Contains(k, "santext") {
			t.Errorf("SanText borrowed a rate: %s at %s", k, e.BorrowedFrom[k])
		}
	}
	// The rates moved to another scoring path.
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
	e = dryRun(t, analysisCfg)
	if e.Seconds <= 0 || e.Borrowed <= 0 || len(e.Unknown) > 0 {
		t.Errorf("rates on %s, this host's path %s: not priced from them: %+v", other, path, e)
	}
	for k, b := range e.BorrowedFrom {
		if !strings.HasSuffix(b, " "+other) && !strings.Contains(b, " "+other+" ") {
			t.Errorf("%s borrowed %s, not a rate on %s", k, b, other)
		}
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

// TestEstimateSaysQueryAttackIsRough: a query attack's cells priced from
// another cell's rate are counted as rough (their vote's cost follows
// each word's probability at its ε), with their share of the time.
func TestEstimateSaysQueryAttackIsRough(t *testing.T) {
	_, write := estimateDir(t)
	path := write("qa.yaml", "analysis:\n  kind: query-attack\n  list: [good1, bad2]\nmechanisms:\n  - name: custext\n    epsilon: [1, 2]\n    params: {k: 3}\n")
	runConfig(t, path, "mechanisms.0.epsilon=[1]", "analysis.list=[good1]")
	e := dryRun(t, path)
	if e.Seconds <= 0 || e.RoughCells != 2 || e.Rough <= 0 || !strings.HasPrefix(e.RoughWhy, "query-attack cells: the vote's cost") {
		t.Errorf("a query attack priced from its quick look: %d rough cells (%v s of %v s), why %q", e.RoughCells, e.Rough, e.Seconds, e.RoughWhy)
	}
}

// TestEstimatePricesConstruction: a dry run prices building CusText's
// mapping once per setting the cache does not hold, and not at all for
// one an earlier run built; a setting never built is priced at the time
// another setting of the mechanism took.
func TestEstimatePricesConstruction(t *testing.T) {
	_, write := estimateDir(t)
	path := write("map.yaml", "analysis:\n  kind: mapping\nmechanisms:\n  - name: custext\n    epsilon: [1]\n    grid:\n      k: [2, 3]\n")
	if e := dryRun(t, path); !e.unknown("construct custext k=2 on ") || !e.unknown("construct custext k=3 on ") {
		t.Errorf("before any mapping is built: unknown %q", e.Unknown)
	}
	runConfig(t, path, "mechanisms.0.grid.k=[2]")
	// K = 3's mapping, never built, is priced at K = 2's time: the dry
	// run has a rate for everything it will do.
	if e := dryRun(t, path); e.unknown("construct custext k=") || e.Seconds <= 0 {
		t.Errorf("after K = 2 was built (its mapping cached, K = 3's priced at K = 2's time): %+v", e)
	}
}

// TestEstimatePricesStages: a dry run prices an epsilon-search stage's
// probes (2 targets × 2 words × (13 probes × 200 draws + the examples' 5),
// 13 = both ends and halvings of [0.01, 10⁴] on log ε to 1%) until a run
// has recorded the stage's result, whose rate then prices it elsewhere.
func TestEstimatePricesStages(t *testing.T) {
	dir, write := estimateDir(t)
	path := write("es.yaml", "analysis:\n  kind: examples\n  list: [good1, bad2]\n  draws: 5\nmechanisms:\n  - name: laplace\n    epsilon: [1]\nstages:\n  - kind: epsilon-search\n    targets: [0.2, 0.6]\n    draws: 200\n")
	if e := dryRun(t, path); e.Stages != 1 || e.StageLookups != 8020 {
		t.Errorf("before: %d stage results, %d lookups; want 1 and 8020", e.Stages, e.StageLookups)
	}
	runConfig(t, path)
	if e := dryRun(t, path); e.Stages != 0 {
		t.Errorf("after the stage ran it is priced again: %+v", e)
	}
	// The finished result recorded its rate: a new output is priced from it.
	if e := dryRun(t, path, "output="+filepath.Join(dir, "other")); e.Stages != 1 || e.Seconds <= 0 || len(e.Unknown) > 0 {
		t.Errorf("into a new output: %+v", e)
	}
}

// TestEstimateDeviceElsewhere: a dry run of a config for a GPU on a host
// without one (a login node planning a GPU sweep) prices its work only
// at rates recorded on a GPU — by the GPU nodes sharing its cache, the
// newest of each — measures nothing on this CPU and says so.
// Before, it priced the GPU's training and search at this CPU's rates,
// or measured them on this CPU, and printed that as the run's time.
func TestEstimateDeviceElsewhere(t *testing.T) {
	if torchrt.CUDAAvailable() {
		t.Skip("CUDA is available here: a GPU config's device is not elsewhere")
	}
	_, write := estimateDir(t)
	path := write("ut.yaml", "mechanisms:\n  - name: laplace\n    epsilon: [5]\napply: [train]\nmodel:\n  kind: baseline\ntrain:\n  epochs: 1\n")
	runConfig(t, path) // records the CPU's rates on this host
	e := dryRun(t, path, "device=cuda")
	if e.Seconds != 0 || len(e.Calibrated) > 0 || !e.unknown("train ") || !strings.Contains(e.Elsewhere, "cuda") {
		t.Errorf("a GPU config on a CPU-only host: %v s, calibrated %q, unknown %q, elsewhere %q; want nothing priced or measured, and the device named", e.Seconds, e.Calibrated, e.Unknown, e.Elsewhere)
	}
	for _, k := range e.Unknown {
		if !strings.HasSuffix(k, " (cuda)") {
			t.Errorf("unpriced %q does not name the GPU", k)
		}
	}
	// GPU nodes sharing the cache recorded those rates: the newest of
	// each prices the work.
	rf := filepath.Join(filepath.Dir(path), "cache", ratesFile)
	b, err := os.ReadFile(rf)
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]map[string]rate{}
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	all["gpu-new"], all["gpu-old"] = map[string]rate{}, map[string]rate{}
	for _, k := range e.Unknown {
		all["gpu-new"][k] = rate{PerSec: 1e9, When: "2026-11-02T00:00:00Z"}
		all["gpu-old"][k] = rate{PerSec: 1e-3, When: "2026-11-01T00:00:00Z"}
	}
	if b, err = json.Marshal(all); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	e = dryRun(t, path, "device=cuda")
	if e.Seconds <= 0 || e.Seconds > 100 || len(e.Unknown) > 0 || len(e.Calibrated) > 0 || !strings.Contains(e.Elsewhere, "gpu-new") || strings.Contains(e.Elsewhere, "gpu-old") {
		t.Errorf("priced from the GPU nodes' rates: %v s (want the newest node's, well under 100 s), unknown %q, calibrated %q, elsewhere %q", e.Seconds, e.Unknown, e.Calibrated, e.Elsewhere)
	}
	if e := dryRun(t, path, "mechanisms.0.epsilon=[7]"); e.Seconds <= 0 || len(e.Unknown) > 0 {
		t.Errorf("new cells of the config on the CPU: %+v", e)
	}
}
