package experiments

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/spec"
)

const good = `name: t
dataset:
  name: sst2
embedding:
  path: e.vec
mechanisms:
  - name: vickrey
    epsilon: [1, 5]
    grid:
      t: [0.25, 0.75]
apply: [none, train, test]
seeds: [1, 2]
`

const goodMechanisms = `mechanisms:
  - name: vickrey
    epsilon: [1, 5]
    grid:
      t: [0.25, 0.75]
`

func parse(t *testing.T, text string, sets ...string) *Config {
	t.Helper()
	c, err := Parse("x.yaml", []byte(text), Options{Set: sets})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseAndCells(t *testing.T) {
	c := parse(t, good)
	if c.Dataset.Test != "dev" || c.Model.Kind != "bilstm" || c.Train.Epochs != 3 || c.Output != "runs/t" {
		t.Errorf("defaults: %+v", c)
	}
	cells := c.Cells()
	// 2 baseline + 2 t × 2 ε × 2 modes × 2 seeds.
	if len(cells) != 18 {
		t.Fatalf("%d cells", len(cells))
	}
	if cells[0].Mode != "none" || cells[2].Setting() != "vickrey t=0.25" || cells[2].Epsilon != 1 {
		t.Errorf("order: %v, %v", cells[0], cells[2])
	}
	in := Inputs{Data: "d", Embedding: "e"}
	keys := map[string]bool{}
	for _, cell := range cells {
		keys[c.Key(cell, in)] = true
	}
	if len(keys) != len(cells) {
		t.Errorf("%d distinct keys for %d cells", len(keys), len(cells))
	}
	// Cells that privatize the training split alike share its corpus.
	train, both := cells[2], cells[2]
	both.Mode = "both"
	if c.CorpusKey(train, "train", in) != c.CorpusKey(both, "train", in) {
		t.Error("modes train and both do not share the privatized training split")
	}
	// A parameter given at its default is the same cell, noise and record.
	a := parse(t, good, "mechanisms.0.params={exclude_input: false}")
	if a.Key(a.Cells()[2], in) != c.Key(cells[2], in) || a.Cells()[2].Stream() != cells[2].Stream() {
		t.Error("exclude_input: false (the default) changed the key or the noise stream")
	}
}

// TestExplicitValuesHonoured: a value the config gives is never replaced
// by a default; values without a meaning are refused (TestParseErrors).
func TestExplicitValuesHonoured(t *testing.T) {
	c := parse(t, good, "dataset.split_seed=0", "model.clip=0", "threads=0", "train.patience=0", "dataset.test=test", "checks.max_oov=0")
	if c.Dataset.SplitSeed != 0 || c.Threads != 0 || c.Train.Patience != 0 || c.Dataset.Test != "test" || c.Checks.MaxOOV != 0 {
		t.Errorf("explicit values replaced: %+v", c)
	}
	if v := c.modelKey(Cell{}).Params; v.Float("clip") != 0 {
		t.Errorf("model.clip: 0 (no clipping) became %v", v.Float("clip"))
	}
	if d := parse(t, good); d.Dataset.SplitSeed != 1 || d.modelKey(Cell{}).Params.Float("clip") != 5 {
		t.Error("defaults of absent keys")
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name, edit, want string
		sets             []string
	}{
		{"unknown key", "seeds: [1, 2]\nsedes: [3]\n", `x.yaml:13: unknown key "sedes" in the config (known: analysis, apply, cache, checks`, nil},
		{"unknown nested key", "seeds: [1]\ntrain:\n  epoch: 2\n", `x.yaml:14: unknown key "epoch" in train (known: batch, epochs, max_len, patience)`, nil},
		{"wrong type", "seeds: [one]\n", `x.yaml:12: seeds.0: one is not a non-negative integer`, nil},
		{"negative seed", "seeds: [-1]\n", `x.yaml:12: seeds.0: -1 is not a non-negative integer`, nil},
		{"fractional epochs", "seeds: [1]\ntrain:\n  epochs: 1.9\n", "x.yaml:14: train.epochs: 1.9 is not an integer", nil},
		{"no value", "seeds: [1]\ntrain:\n  epochs:\n", "x.yaml:14: train.epochs has no value", nil},
		{"empty seeds", "seeds: []\n", "x.yaml:12: seeds is empty", nil},
		{"zero epochs", "seeds: [1]\ntrain:\n  epochs: 0\n", "x.yaml:14: train.epochs = 0, want ≥ 1", nil},
		{"clip inf", "seeds: [1]\nmodel:\n  clip: .inf\n", "x.yaml:14: model.clip: .inf is not a finite number", nil},
		{"nan in params", "seeds: [1]\nmodel:\n  lr: .nan\n", "x.yaml:14: model.lr: .nan is not a finite number", nil},
		{"lr zero", "seeds: [1]\nmodel:\n  lr: 0\n", "x.yaml:14: bilstm: parameter lr = 0, want a number in (0, ∞)", nil},
		{"unknown model param", "seeds: [1]\nmodel:\n  kind: baseline\n  hidden: 64\n", `x.yaml:15: baseline: unknown parameter "hidden" (known: clip, dropout, fine_tune, head_hidden, lr)`, nil},
		{"valid fraction zero", "", "x.yaml: --set dataset.valid_fraction=0: valid_fraction 0 outside (0, 1)", []string{"dataset.valid_fraction=0"}},
		{"test is train", "", `x.yaml: --set dataset.test=train: dataset.test is the training split "train"`, []string{"dataset.test=train"}},
		{"epsilon zero", "", "x.yaml: --set mechanisms.0.epsilon=[0, 1]: vickrey: ε = 0, want a finite value > 0", []string{"mechanisms.0.epsilon=[0, 1]"}},
		{"epsilon zero in file", "seeds: [1]\nmechanisms:\n  - name: laplace\n    epsilon: [1, 0]\n", "x.yaml:8: laplace: ε = 0, want a finite value > 0", nil},
		{"epsilon repeats", "seeds: [1]\nmechanisms:\n  - name: laplace\n    epsilon: [1, 1]\n", "x.yaml:8: laplace: ε = 1 repeats", nil},
		{"t out of range", "", "x.yaml: --set mechanisms.0.grid.t=[1.5]: vickrey: grid value t = 1.5, want a number in [0, 1]", []string{"mechanisms.0.grid.t=[1.5]"}},
		{"t out of range in file", "seeds: [1]\nmechanisms:\n  - name: vickrey\n    epsilon: [1]\n    grid:\n      t: [0.5, 2]\n", "x.yaml:10: vickrey: grid value t = 2", nil},
		{"rank zero", "seeds: [1]\nmechanisms:\n  - name: vickrey\n    epsilon: [1]\n    params:\n      rank: 0\n", "x.yaml:10: vickrey: parameter rank = 0, want an integer in [1, ∞)", nil},
		{"variants", "seeds: [1]\nmechanisms:\n  - name: vickrey\n    epsilon: [1]\n    params:\n      rank: 2\n    grid:\n      t: [0.5]\n", "x.yaml:10: vickrey: t and rank are different variants", nil},
		{"unknown mechanism", "seeds: [1]\nmechanisms:\n  - name: gauss\n    epsilon: [1]\n", `x.yaml:7: unknown mechanism "gauss" (known: ` + strings.Join(spec.Names(spec.Mechanism), ", ") + ")", nil},
		{"bad mode", "", "x.yaml: --set apply=[sometimes]: apply \"sometimes\"", []string{"apply=[sometimes]"}},
		{"mechanisms never run", "", "x.yaml: --set apply=[none]: mechanisms are given but apply has no privatized mode", []string{"apply=[none]"}},
		{"unknown dataset", "", "x.yaml: --set dataset.name=books: unknown dataset \"books\" (known: imdb, sst2", []string{"dataset.name=books"}},
		{"bad set type", "", "x.yaml: --set train.epochs=many: train.epochs: many is not an integer", []string{"train.epochs=many"}},
		{"table without file", "", "x.yaml: --set dataset.name=table: dataset table reads your file: set dataset.path", []string{"dataset.name=table"}},
		{"table without test", "", "x.yaml: --set dataset.name=table: dataset table: give its test file (test_path) or carve a test split from it (test_fraction)", []string{"dataset.name=table", "dataset.path=d.csv"}},
		{"table columns elsewhere", "", "x.yaml: --set dataset.label=y: dataset.label belongs to dataset table (a CSV, TSV or JSONL file), not sst2", []string{"dataset.label=y"}},
		{"test fraction of sst2", "", "x.yaml: --set dataset.test_fraction=0.2: test_fraction carves a test split from table or folder data; sst2 has its own test split", []string{"dataset.test_fraction=0.2"}},
		{"test fraction one", "", "x.yaml: --set dataset.test_fraction=1: test_fraction 1 outside (0, 1)", []string{"dataset.name=folder", "dataset.test_fraction=1"}},
		{"both tests", "", "x.yaml: --set dataset.test_fraction=0.2: test_fraction and test_path both give a test split", []string{"dataset.name=table", "dataset.path=d.csv", "dataset.test_path=t.csv", "dataset.test_fraction=0.2"}},
		{"bad set path", "", "--set seeds.x=1", []string{"seeds.x=1"}},
		{"dropout", "", "x.yaml: --set model.dropout=1.5: bilstm: parameter dropout = 1.5, want a number in [0, 1)", []string{"model.dropout=1.5"}},
		{"workers", "", "x.yaml: --set workers=-1: workers = -1, want ≥ 1", []string{"workers=-1"}},
		{"device", "", "x.yaml: --set device=gpu: device \"gpu\": want cpu, cuda, cuda:N or auto", []string{"device=gpu"}},
		{"max_oov", "", "--set checks.max_oov=2: checks.max_oov = 2, want a share in [0, 1]", []string{"checks.max_oov=2"}},
		{"name ..", "", `name "..": a folder's name, not . or ..`, []string{"name=.."}},
		{"name .", "", `name ".": a folder's name, not . or ..`, []string{"name=."}},
		{"name with a slash", "", `name "a/b": no slashes`, []string{"name=a/b"}},
		{"name with a control character", "", `name "a\x1b[2Jb": no control characters`, []string{`name="a\x1b[2Jb"`}},
		{"vocabulary", "", `embedding.vocabulary "task": want all or dataset`, []string{"embedding.vocabulary=task"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := good
			if m, ok := strings.CutPrefix(c.edit, "seeds: [1]\nmechanisms:\n"); ok {
				// A mechanisms block replaces the config's own.
				text = strings.Replace(good, goodMechanisms, "mechanisms:\n"+m, 1)
			} else if c.edit != "" {
				text = strings.Replace(good, "seeds: [1, 2]\n", c.edit, 1)
			}
			_, err := Parse("x.yaml", []byte(text), Options{Set: c.sets})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant %q", err, c.want)
			}
		})
	}
}

// TestResolvedRoundTrip: the resolved form of a utility config and of an
// analysis config loads back to the same cells and keys (worker processes
// and Slurm tasks run from it; an analysis config's held a default apply,
// which analyses refuse) and keeps its origin.
func TestResolvedRoundTrip(t *testing.T) {
	c := parse(t, good, "train.epochs=2", "model.clip=0", "mechanisms.0.params={exclude_input: true}")
	r := roundTrip(t, c)
	if file, sum := r.Source(); !strings.HasSuffix(file, "x.yaml") || sum != c.SHA256() || len(r.Origin.Set) != 3 {
		t.Errorf("origin %+v", r.Origin)
	}
	// A resolved config resolved again keeps its origin.
	b2, _ := r.Resolved()
	r2, err := Parse("elsewhere.yaml", b2, Options{})
	if err != nil || r2.Origin.SHA256 != c.SHA256() {
		t.Errorf("re-resolved: %v %+v", err, r2.Origin)
	}
	if math.IsNaN(r.Checks.MaxOOV) || r.Model.Kind != "bilstm" {
		t.Errorf("resolved: %+v", r)
	}
	roundTrip(t, parse(t, goodPD, "analysis.draws=50"))
}

// roundTrip parses c's resolved form and checks it plans c's cells with
// c's keys.
func roundTrip(t *testing.T, c *Config) *Config {
	t.Helper()
	b, err := c.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse("run/config.yaml", b, Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	in := Inputs{Data: "d", Embedding: "e"}
	cells, rcells := c.Cells(), r.Cells()
	if len(cells) != len(rcells) {
		t.Fatalf("%d cells, resolved %d", len(cells), len(rcells))
	}
	for i := range cells {
		if c.Key(cells[i], in) != r.Key(rcells[i], in) || cells[i].Setting() != rcells[i].Setting() {
			t.Errorf("cell %d: %v vs %v", i, cells[i], rcells[i])
		}
	}
	return r
}

func TestSelect(t *testing.T) {
	c := parse(t, good, "apply=[none, train, both]")
	cell, err := c.Select(Selector{Setting: "vickrey t=0.75", Epsilon: 5, Seed: 2, Role: "train"})
	if err != nil || cell.Mode != "train" || cell.Epsilon != 5 || cell.Seed != 2 || cell.Setting() != "vickrey t=0.75" {
		t.Errorf("train: %v %v", cell, err)
	}
	// No test-mode cell: the both cell privatizes the test split.
	if cell, err := c.Select(Selector{Setting: "vickrey t=0.25", Epsilon: 1, Seed: 1, Role: "test"}); err != nil || cell.Mode != "both" {
		t.Errorf("test: %v %v", cell, err)
	}
	for _, sel := range []struct {
		s    Selector
		want string
	}{
		{Selector{Setting: "vickrey t=0.25", Seed: 1, Role: "train"}, `several cells match: choose among settings "vickrey t=0.25", "vickrey t=0.75"; ε 1, 5; seeds 1, 2`},
		{Selector{Setting: "laplace", Epsilon: 1, Seed: 1, Role: "train"}, "no cell matches"},
	} {
		if _, err := c.Select(sel.s); err == nil || !strings.Contains(err.Error(), sel.want) {
			t.Errorf("%+v: %v", sel.s, err)
		}
	}
	if _, err := parse(t, good, "apply=[none, train]").Select(Selector{Role: "test", AnySeed: true}); err == nil || !strings.Contains(err.Error(), "privatizes the test split") {
		t.Errorf("no test cells: %v", err)
	}
}

func TestDevices(t *testing.T) {
	for d, ok := range map[string]bool{"cpu": true, "auto": true, "cuda": true, "cuda:0": true, "cuda:12": true, "cuda:": false, "cuda:-1": false, "gpu": false, "cuda:x": false} {
		if _, err := Parse("x.yaml", []byte(good), Options{Set: []string{"device=" + d}}); (err == nil) != ok {
			t.Errorf("device %q: %v", d, err)
		}
	}
}

// aliasBomb is a config of 700 bytes whose mechanism parameters, once
// their aliases are expanded, hold 10^10 numbers.
var aliasBomb = func() []byte {
	var b strings.Builder
	b.WriteString("name: bomb\nmechanisms:\n  - name: laplace\n    epsilon: [1]\n    params:\n      a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "      a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	return []byte(b.String())
}()

// TestAliasBomb: a config whose aliases expand past the node budget is
// refused at the line of the alias, not walked (xp walked it for half an
// hour, deaf to SIGINT); a config using aliases within the budget is read
// as written.
func TestAliasBomb(t *testing.T) {
	_, err := Parse("bomb.yaml", aliasBomb, Options{})
	if err == nil || !strings.Contains(err.Error(), "bomb.yaml:") || !strings.Contains(err.Error(), "expand") {
		t.Fatalf("alias bomb: %v, want refused with file and line", err)
	}
	// The same through --set, in flow style.
	flow := []string{"a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"}
	for i := 1; i < 10; i++ {
		flow = append(flow, fmt.Sprintf("a%d: &a%d [%s]", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", ")))
	}
	_, err = Parse("ok.yaml", []byte("name: ok\nmechanisms:\n  - name: laplace\n    epsilon: [1]\n"), Options{Set: []string{"mechanisms.0.params={" + strings.Join(flow, ", ") + "}"}})
	if err == nil || !strings.Contains(err.Error(), "--set") || !strings.Contains(err.Error(), "expand") {
		t.Fatalf("alias bomb through --set: %v, want refused naming the --set", err)
	}
	c, err := Parse("fine.yaml", []byte("name: fine\ndataset: {name: sst2}\nembedding: {path: v.vec}\nmechanisms:\n  - name: laplace\n    epsilon: &grid [1, 5]\n  - name: vickrey\n    epsilon: *grid\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Mechanisms[1].Epsilon; len(got) != 2 || got[1] != 5 {
		t.Errorf("an aliased grid: %v", got)
	}
}

// TestBounds: what a config may ask for is bounded — threads and workers
// by the machine's cores, seeds and ε grids by a stated size (a list of
// ten million seeds hung validation, which compared every seed with every
// other), names by length and by what a terminal shows safely — and
// refused naming the key.
func TestBounds(t *testing.T) {
	many := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = strconv.Itoa(i + 1)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	for _, c := range []struct{ set, want string }{
		{"threads=1000000", "threads = 1000000, at most 4 per core"},
		{"workers=1000000", "workers = 1000000, at most 4 per core"},
		{"seeds=" + many(MaxSeeds+1), fmt.Sprintf("%d seeds, at most %d", MaxSeeds+1, MaxSeeds)},
		{"mechanisms.0.epsilon=" + many(MaxEpsilons+1), fmt.Sprintf("%d ε, at most %d", MaxEpsilons+1, MaxEpsilons)},
		{"name=" + strings.Repeat("n", MaxName+1), fmt.Sprintf("name: %d characters, at most %d", MaxName+1, MaxName)},
		{"name=evil\u202etxt", "no control characters or bidirectional overrides"},
		{`name="c1\x85end"`, "no control characters or bidirectional overrides"}, // YAML's escape: U+0085
		{"train.batch=9000000000000", "train.batch = 9000000000000, at most 2147483647"},
		{"mechanisms.0.grid={t: " + many(MaxEpsilons+1) + "}", fmt.Sprintf("grid t: %d values, at most %d", MaxEpsilons+1, MaxEpsilons)},
		{"mechanisms.0.params={rank: 9000000000000}", "at most 2147483647 in size"},
	} {
		_, err := Parse("x.yaml", []byte(good), Options{Set: []string{c.set}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %.40s: %v, want %q", c.set, err, c.want)
		}
	}
	// At the bounds: accepted, and a long list of distinct seeds is
	// checked in one pass.
	if _, err := Parse("x.yaml", []byte(good), Options{Set: []string{"seeds=" + many(MaxSeeds), "threads=" + strconv.Itoa(MaxThreads()), "name=" + strings.Repeat("n", MaxName)}}); err != nil {
		t.Error(err)
	}
}
