package runner

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/analysis"
	"github.com/xp-nlp/xp/claims"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/table"
)

// analysisConfig writes an analysis config over the fixture's corpus and
// vectors (40 words, 8 dimensions).
func analysisConfig(t *testing.T, body string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	if _, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 5, Epochs: 1, Epsilon: []float64{1}, Seeds: []int{1}}); err != nil {
		t.Fatal(err)
	}
	path, out, err := fixture.Config(dir, "a", body)
	if err != nil {
		t.Fatal(err)
	}
	return path, out
}

// loader loads the config at path with overrides, failing the test on
// an error.
func loader(t *testing.T, path string) func(sets ...string) *experiments.Config {
	return func(sets ...string) *experiments.Config {
		t.Helper()
		c, err := experiments.Load(path, experiments.Options{Set: sets})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

func runConfig(t *testing.T, path string, sets ...string) Summary {
	t.Helper()
	c, err := experiments.Load(path, experiments.Options{Set: sets})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed > 0 {
		for _, cs := range sum.Cells {
			t.Errorf("%s: %s", cs.Cell, cs.Error)
		}
		t.FailNow()
	}
	return sum
}

// runRecords reads the records of sum, the run of the config at path with
// sets.
func runRecords(t *testing.T, path string, sum Summary, sets ...string) []results.Record {
	t.Helper()
	c, err := experiments.Load(path, experiments.Options{Set: sets})
	if err != nil {
		t.Fatal(err)
	}
	store, err := results.OpenStore(c.Output)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := store.Records(sum.Keys())
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestAnalysisRunAndReuse: analysis cells are recorded, reused by a
// second run, and reused when only the model section changes.
func TestAnalysisRunAndReuse(t *testing.T) {
	path, out := analysisConfig(t, `analysis:
  kind: plausible-deniability
  words: 10
  draws: 50
mechanisms:
  - name: laplace
    epsilon: [0.5, 50]
  - name: custext
    epsilon: [1]
    params: {k: 5}
seeds: [1, 2]
model:
  kind: bilstm
  hidden: 8
`)
	first := runConfig(t, path)
	if first.Ran != 6 || len(first.Stats) != 3 {
		t.Fatalf("first run: %d ran, %d table rows", first.Ran, len(first.Stats))
	}
	for _, r := range first.Stats {
		nw, _ := r.Stat("N_w mean")
		sw, _ := r.Stat("S_w mean")
		if r.Seeds != 2 || nw < 0 || nw > 50 || sw < 1 || sw > 50 {
			t.Errorf("%s ε=%v: N_w %v, S_w %v over %d seeds", r.Setting, r.Epsilon, nw, sw, r.Seeds)
		}
	}
	// Rows in the config's order of settings, then ε: laplace 0.5,
	// laplace 50, custext k=5.
	if first.Stats[0].Setting != "laplace" || first.Stats[2].Setting != "custext k=5" {
		t.Errorf("rows %s, %s, %s: not in the config's order", first.Stats[0].Setting, first.Stats[1].Setting, first.Stats[2].Setting)
	}
	lo, _ := first.Stats[0].Stat("N_w mean")
	hi, _ := first.Stats[1].Stat("N_w mean")
	if !(lo < hi) {
		t.Errorf("Laplace N_w at ε=0.5 (%v) not below ε=50 (%v)", lo, hi)
	}
	again := runConfig(t, path, "model.hidden=16", "train.epochs=7")
	if again.Reused != 6 || again.Ran != 0 {
		t.Errorf("after editing the model: %d reused, %d ran", again.Reused, again.Ran)
	}
	if _, err := os.Stat(filepath.Join(out, "plots", "plausible-deniability.png")); err != nil {
		t.Error(err)
	}
}

// TestDeniabilityExactMatchesSampled: SanText's exact N_w and S_w (the
// expectations) agree with the sampled ones through its Privatize.
func TestDeniabilityExactMatchesSampled(t *testing.T) {
	path, _ := analysisConfig(t, `analysis:
  kind: plausible-deniability
  from: list
  list: [good1, bad3, good7]
  draws: 4000
mechanisms:
  - name: santext
    epsilon: [2]
`)
	stat := func(exact bool) (float64, float64) {
		sum := runConfig(t, path, fmt.Sprintf("analysis.exact=%v", exact))
		nw, _ := sum.Stats[0].Stat("N_w mean")
		sw, _ := sum.Stats[0].Stat("S_w mean")
		return nw, sw
	}
	enw, esw := stat(true)
	snw, ssw := stat(false)
	// N_w is a mean of 3 binomial counts of 4,000 draws: sd ≈ √(4000·p)/√3.
	if math.Abs(enw-snw) > 5*math.Sqrt(enw/3)+1 || math.Abs(esw-ssw) > 2 {
		t.Errorf("exact N_w %v S_w %v, sampled N_w %v S_w %v", enw, esw, snw, ssw)
	}
}

// TestBayesAdversary: E_M falls as ε grows and lies in [0, 1]; exact and
// sampled f_M agree for SanText.
func TestBayesAdversary(t *testing.T) {
	path, _ := analysisConfig(t, `analysis:
  kind: bayes-adversary
  samples: 3000
mechanisms:
  - name: laplace
    epsilon: [0.5, 200]
  - name: santext
    epsilon: [3]
`)
	sum := runConfig(t, path)
	em := map[string]float64{}
	for _, r := range sum.Stats {
		m, _ := r.Stat("E_M")
		if !(m >= 0 && m <= 1) {
			t.Errorf("%s ε=%v: E_M %v", r.Setting, r.Epsilon, m)
		}
		em[fmt.Sprintf("%s %v", r.Setting, r.Epsilon)] = m
	}
	if !(em["laplace 0.5"] > em["laplace 200"]+0.3) {
		t.Errorf("E_M: %v", em)
	}
	for _, r := range runRecords(t, path, sum) {
		if r.Cell.Mechanism == "santext" && r.Analysis.Method != "exact" {
			t.Errorf("SanText's f_M: %s", r.Analysis.Method)
		}
		if r.Cell.Mechanism == "laplace" && r.Analysis.Stats[0].Lo == 0 {
			t.Errorf("sampled E_M without an interval: %+v", r.Analysis.Stats[0])
		}
	}
}

// TestStages: utility-loss pairs each analysis cell with the utility
// cells of its setting, ε and seed (L_M = baseline − accuracy, exactly);
// select chooses within the budget; a second run reuses every result, and
// changing only the budget recomputes only the selection.
func TestStages(t *testing.T) {
	body := `analysis:
  kind: bayes-adversary
  samples: 20
mechanisms:
  - name: laplace
    epsilon: [0.5, 20]
seeds: [1, 2]
model:
  kind: baseline
train:
  epochs: 1
stages:
  - kind: utility-loss
    apply: [test, both]
  - kind: select
    budget: 0.2
    loss: L_M test
`
	path, out := analysisConfig(t, body)
	sum := runConfig(t, path)
	if sum.Ran != 2*2+2+2*2*2 {
		t.Fatalf("ran %d cells", sum.Ran)
	}
	store, err := results.OpenStore(out)
	if err != nil {
		t.Fatal(err)
	}
	byPoint := map[string]results.Record{}
	cells, _ := store.Records(sum.Keys())
	for _, r := range cells {
		byPoint[r.Cell.String()] = r
	}
	var losses, selects int
	for _, st := range sum.Stages {
		if st.Status != "ok" {
			t.Fatalf("%s: %s %s", st.Cell, st.Status, st.Error)
		}
		r, _, _ := store.Get(st.Key)
		switch st.Cell.Analysis {
		case "utility-loss":
			losses++
			base := byPoint[fmt.Sprintf("baseline seed=%d", st.Cell.Seed)].Test.Accuracy
			for _, mode := range []string{"test", "both"} {
				u := st.Cell
				u.Analysis, u.Mode = "", mode
				want := base - byPoint[u.String()].Test.Accuracy
				if got := r.Analysis.Stat("L_M " + mode); got != want {
					t.Errorf("%s: L_M %s = %v, want %v", st.Cell, mode, got, want)
				}
			}
			a := st.Cell
			a.Analysis = "bayes-adversary"
			if r.Analysis.Stat("E_M") != byPoint[a.String()].Analysis.Stat("E_M") || len(r.Inputs) != 4 {
				t.Errorf("%s: E_M %v, inputs %d", st.Cell, r.Analysis.Stat("E_M"), len(r.Inputs))
			}
		case "select":
			selects++
			if lm := r.Analysis.Stat("L_M test"); lm > 0.2 || r.Analysis.Stat("budget") != 0.2 {
				t.Errorf("%s chose L_M %v over the budget", st.Cell, lm)
			}
			if !strings.HasPrefix(r.Analysis.Method, "Algorithm 2 as published") {
				t.Errorf("%s: method %q, want the paper's procedure by default", st.Cell, r.Analysis.Method)
			}
		}
	}
	if losses != 4 || selects != 2 {
		t.Fatalf("%d utility-loss and %d select results, want 4 and 2", losses, selects)
	}
	for _, want := range []string{"plots/bayes-adversary.png", "plots/utility-loss.svg", "plots/accuracy.png", "tables/analysis.md", "tables/results.csv"} {
		if !slices.Contains(append(sum.Plots, sum.Tables...), filepath.Join(out, want)) {
			t.Errorf("no %s among %v %v", want, sum.Tables, sum.Plots)
		}
	}
	again := runConfig(t, path)
	for _, st := range again.Stages {
		if again.Ran != 0 || st.Status != "cached" {
			t.Errorf("second run: %d cells ran, %s %s", again.Ran, st.Cell, st.Status)
		}
	}
	// The stage's utility cells read the task's splits; the analysis
	// cells keep their own view of the data, and so their keys.
	plain, err := experiments.Load(path, experiments.Options{Set: []string{"stages=[]"}})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := Open(context.Background(), plain, SessionOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	for i, c := range plain.Cells() {
		if k := ps.Key(c); k != sum.Cells[i].Key {
			t.Errorf("%s: key %.12s without the stage, %.12s with it", c, k, sum.Cells[i].Key)
		}
	}
	third := runConfig(t, path, "stages.1.budget=0.5")
	for _, st := range third.Stages {
		if want := map[string]string{"utility-loss": "cached", "select": "ok"}[st.Cell.Analysis]; st.Status != want {
			t.Errorf("budget changed: %s %s, want %s", st.Cell, st.Status, want)
		}
	}
}

// TestEpsilonSearch: the ε found for a larger target N_w is larger, and
// the examples are shown at it.
func TestEpsilonSearch(t *testing.T) {
	path, _ := analysisConfig(t, `analysis:
  kind: examples
  list: [good1, bad2]
  draws: 5
mechanisms:
  - name: laplace
    epsilon: [1]
seeds: [1]
stages:
  - kind: epsilon-search
    targets: [0.2, 0.6]
    draws: 200
    tolerance: 0.1
`)
	sum := runConfig(t, path)
	if len(sum.Stages) != 1 || sum.Stages[0].Status != "ok" {
		t.Fatalf("stages %+v", sum.Stages)
	}
	var row results.StatRow
	for _, r := range sum.Stats {
		if r.Analysis == "epsilon-search" {
			row = r
		}
	}
	lo, _ := row.Stat("ε @ N_w 0.2")
	hi, _ := row.Stat("ε @ N_w 0.6")
	n2, _ := row.Stat("N_w share @ 0.2")
	n6, _ := row.Stat("N_w share @ 0.6")
	if !(lo < hi) || math.Abs(n2-0.2) > 0.02 || math.Abs(n6-0.6) > 0.06 {
		t.Errorf("ε %v → N_w %v, ε %v → N_w %v (notes %v)", lo, n2, hi, n6, row.Notes)
	}
	if len(row.Examples) != 4 {
		t.Errorf("examples %v", row.Examples)
	}
}

// TestListedWordWithoutVector: a listed word without a vector is an error
// at the config's key before any cell runs.
func TestListedWordWithoutVector(t *testing.T) {
	path, _ := analysisConfig(t, `analysis:
  kind: examples
  list: [good1, encryption, bad2, zz]
mechanisms:
  - name: laplace
    epsilon: [1]
seeds: [1]
`)
	c, err := experiments.Load(path, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), c, Options{})
	want := `a.yaml:13: examples: no vector in vectors.txt for "encryption", "zz"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v\nwant …%s", err, want)
	}
}

// TestMappingTable4: conservative mappings are all N–M (disjoint sets),
// aggressive ones mostly not (CusText's Table 4 ordering).
func TestMappingTable4(t *testing.T) {
	path, _ := analysisConfig(t, `analysis:
  kind: mapping
mechanisms:
  - name: custext
    epsilon: [1]
    params: {k: 5}
    grid:
      mapping: [aggressive, balanced, conservative]
seeds: [1]
`)
	sum := runConfig(t, path)
	got := map[string]float64{}
	for _, r := range sum.Stats {
		got[r.Setting], _ = r.Stat("not N–M % tokens")
	}
	if c := got["custext k=5 mapping=conservative"]; c != 0 {
		t.Errorf("conservative: %v%% not N–M, want 0", c)
	}
	if a, b := got["custext k=5 mapping=aggressive"], got["custext k=5 mapping=balanced"]; !(a > 2*b) || a < 50 {
		t.Logf("aggressive %v, balanced %v", a, b)
		t.Errorf("aggressive %v%% not N–M, balanced %v%%: want aggressive far above", a, b)
	}
}

// TestSplitMeasures: utility cells asked for privacy measures record them
// for each split they privatize; the draws a word needs are made once
// (the both cell's training split is the train cell's: it draws nothing)
// and measures read from the draws cache equal those drawn afresh; a
// changed measure reruns the privatized cells, not the baseline, and
// trains no model.
func TestSplitMeasures(t *testing.T) {
	c, _ := fixtureConfig(t, fixture.Options{Train: 30, Test: 10, Epochs: 1, Epsilon: []float64{2}, Seeds: []int{1}},
		"apply=[none, train, both]", "privacy={top: 12, draws: 40}")
	ctx := context.Background()
	sum, err := Run(ctx, c, Options{})
	if err != nil || sum.Failed > 0 {
		t.Fatalf("%v, %d failed", err, sum.Failed)
	}
	byCell := func(c *experiments.Config) map[string]results.Record {
		store, _ := results.OpenStore(c.Output)
		recs, _ := store.All()
		m := map[string]results.Record{}
		for _, r := range recs {
			m[r.Cell.String()] = r
		}
		return m
	}
	recs := byCell(c)
	if m := recs["baseline seed=1"].Measures; m != nil {
		t.Errorf("baseline measured: %v", m)
	}
	train, both := recs["laplace ε=2 train seed=1"], recs["laplace ε=2 both seed=1"]
	if len(train.Measures) != 2 || len(both.Measures) != 3 {
		t.Fatalf("measured splits: train cell %d, both cell %d; want 2 (train, valid) and 3", len(train.Measures), len(both.Measures))
	}
	for _, r := range []results.Record{train, both} {
		for split, a := range r.Measures {
			types, nw, sw, rec := a.Stat("word types"), a.Stat("N_w %"), a.Stat("S_w %"), a.Stat("recovery")
			if !(types > 0 && types <= 12) || !(nw >= 0 && nw <= 100) || !(sw > 0 && sw <= 100) || !(rec >= 0 && rec <= 1) {
				t.Errorf("%s %s: %+v", r.Cell, split, a.Stats)
			}
		}
	}
	// Cells run in order: the train cell drew the training split's words
	// into the draws cache, the both cell read them there: the same
	// numbers. (How many draws each execution made is no part of a
	// record: TestRecordIndependentOfMemo.)
	first, second := train.Measures["train"], both.Measures["train"]
	if !reflect.DeepEqual(first.Stats, second.Stats) {
		t.Errorf("training split's measures: %+v vs %+v", first.Stats, second.Stats)
	}
	if memo, _ := os.ReadDir(filepath.Join(c.Cache, drawsDir)); len(memo) == 0 {
		t.Error("no draws memoised in the cache")
	}
	// Drawn afresh (no draws cache, no records): the same numbers.
	fresh := c.Clone()
	fresh.Output = filepath.Join(t.TempDir(), "out")
	if err := os.RemoveAll(filepath.Join(c.Cache, drawsDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, fresh, Options{}); err != nil {
		t.Fatal(err)
	}
	again := byCell(fresh)["laplace ε=2 both seed=1"]
	for split, a := range both.Measures {
		if !reflect.DeepEqual(a.Stats, again.Measures[split].Stats) {
			t.Errorf("%s: from the cache %+v, drawn afresh %+v", split, a.Stats, again.Measures[split].Stats)
		}
	}
	// More draws: the privatized cells run again with their models reused.
	more, err := experiments.Load(c.File(), experiments.Options{Set: []string{"apply=[none, train, both]", "privacy={top: 12, draws: 60}"}})
	if err != nil {
		t.Fatal(err)
	}
	s3, err := Run(ctx, more, Options{})
	if err != nil || s3.Ran != 2 || s3.Reused != 1 || s3.Trained != 0 {
		t.Errorf("draws 40 → 60: %v; %d ran, %d reused, %d trained; want 2, 1, 0", err, s3.Ran, s3.Reused, s3.Trained)
	}
}

// TestHeldOut: with few draws the plug-in E_M flatters the adversary
// (below what many draws give) and the held-out E_M is closer to it; with
// many draws they meet. (With 20 draws per word on the fixture the
// plug-in put Laplace at ε = 0.5 at 0.917, the held-out estimate at 0.967,
// 4,000 draws at 0.969. The held-out estimate is no bound: it was below
// too, by less.)
func TestHeldOut(t *testing.T) {
	path, _ := analysisConfig(t, `analysis:
  kind: bayes-adversary
mechanisms:
  - name: laplace
    epsilon: [0.5, 2, 5, 10]
`)
	stats := func(samples string) map[float64][2]float64 {
		out := map[float64][2]float64{}
		for _, r := range runConfig(t, path, "analysis.samples="+samples).Stats {
			plug, _ := r.Stat("E_M")
			held, _ := r.Stat("E_M held-out")
			out[r.Epsilon] = [2]float64{plug, held}
		}
		return out
	}
	few, many := stats("20"), stats("4000")
	for eps, m := range many {
		if math.Abs(m[0]-m[1]) > 0.005 {
			t.Errorf("ε=%v, 4,000 draws: plug-in %v and held-out %v do not meet", eps, m[0], m[1])
		}
		if f := few[eps]; !(f[0] < m[0] && math.Abs(f[1]-m[0]) < math.Abs(f[0]-m[0])) {
			t.Errorf("ε=%v, 20 draws: plug-in %v, held-out %v; 4,000 draws %v", eps, f[0], f[1], m[0])
		}
	}
}

// writeFiles writes each file (a path under dir → its text), making its
// folders.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLexiconEntriesWhole: the opinion lexicon's entries are the prior's
// words as they stand, each once, and every one of them is labelled (the
// sentence tokenizer split "2-faced" into "2", "-" and "faced", which are
// no entry, carry no label and took a share of the prior; an entry listed
// under both polarities counted twice).
func TestLexiconEntriesWhole(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"data/opinion_lexicon/negative-words.txt": ";comment\n\n2-faced\nbad\nenvious\n",
		"data/opinion_lexicon/positive-words.txt": ";comment\n\ngood\nenvious\nwell-known\n",
		"data/vectors.txt":                        "2 1 0\n- 0 1\nfaced 1 1\n2-faced 2 0\nbad 0 2\nenvious 2 2\ngood 3 0\nwell-known 0 3\n",
		"a.yaml": "name: a\ndataset:\n  name: opinion\nembedding:\n  path: vectors.txt\nanalysis:\n  kind: bayes-adversary\n  samples: 10\nmechanisms:\n  - name: laplace\n    epsilon: [1]\n" +
			"data: " + filepath.Join(dir, "data") + "\noutput: " + filepath.Join(dir, "out") + "\ncache: " + filepath.Join(dir, "cache") + "\n",
	}
	writeFiles(t, dir, files)
	c, err := experiments.Load(filepath.Join(dir, "a.yaml"), experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := load(context.Background(), c, false, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"2-faced": 1, "bad": 1, "envious": 1, "good": 1, "well-known": 1}
	if !maps.Equal(in.counts, want) {
		t.Errorf("prior counts %v, want %v", in.counts, want)
	}
	for w := range in.counts {
		if _, ok := in.labels[w]; !ok {
			t.Errorf("prior word %q has no label", w)
		}
	}
	sum := runConfig(t, filepath.Join(dir, "a.yaml"))
	if n, _ := sum.Stats[0].Stat("prior words"); n != 5 {
		t.Errorf("prior words %v, want the 5 entries with a vector", n)
	}
}

// TestVocabularyDataset: embedding.vocabulary: dataset keeps only the
// vectors of the dataset's words — for the opinion lexicon its entries,
// so a mechanism's candidates are the lexicon's words — and the vectors'
// checksum (hence every key) says so; without it every vector is a
// candidate.
func TestVocabularyDataset(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"data/opinion_lexicon/negative-words.txt": ";comment\n\n2-faced\nbad\nenvious\n",
		"data/opinion_lexicon/positive-words.txt": ";comment\n\ngood\nwell-known\n",
		"data/vectors.txt":                        "2 1 0\n- 0 1\nfaced 1 1\n2-faced 2 0\nbad 0 2\nenvious 2 2\ngood 3 0\nwell-known 0 3\nother 1 2\n",
		"a.yaml": "name: a\ndataset:\n  name: opinion\nembedding:\n  path: vectors.txt\nanalysis:\n  kind: bayes-adversary\n  samples: 10\nmechanisms:\n  - name: laplace\n    epsilon: [1]\n" +
			"data: " + filepath.Join(dir, "data") + "\noutput: " + filepath.Join(dir, "out") + "\ncache: " + filepath.Join(dir, "cache") + "\n",
	}
	writeFiles(t, dir, files)
	words := map[string][]string{}
	sums := map[string]string{}
	for _, vocab := range []string{"all", "dataset"} {
		c, err := experiments.Load(filepath.Join(dir, "a.yaml"), experiments.Options{Set: []string{"embedding.vocabulary=" + vocab}})
		if err != nil {
			t.Fatal(err)
		}
		in, err := load(context.Background(), c, false, io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		words[vocab], sums[vocab] = in.mech.Words, in.sums.Embedding
	}
	if want := []string{"2-faced", "bad", "envious", "good", "well-known"}; !slices.Equal(words["dataset"], want) {
		t.Errorf("vocabulary dataset: candidates %v, want the lexicon's %v", words["dataset"], want)
	}
	if len(words["all"]) != 9 {
		t.Errorf("vocabulary all: %d candidates, want the file's 9", len(words["all"]))
	}
	if sums["all"] == sums["dataset"] {
		t.Errorf("the restriction is not in the vectors' checksum (%q)", sums["dataset"])
	}
	all, _ := experiments.Load(filepath.Join(dir, "a.yaml"), experiments.Options{Set: []string{"embedding.vocabulary=all"}})
	none, _ := experiments.Load(filepath.Join(dir, "a.yaml"), experiments.Options{})
	if all.Key(all.Cells()[0], experiments.Inputs{}) != none.Key(none.Cells()[0], experiments.Inputs{}) {
		t.Error("vocabulary all and no vocabulary key differently: all is the default")
	}
	sum := runConfig(t, filepath.Join(dir, "a.yaml"), "embedding.vocabulary=dataset")
	if n, _ := sum.Stats[0].Stat("prior words"); n != 5 {
		t.Errorf("prior words %v, want the 5 entries", n)
	}
	if _, err := experiments.Load(filepath.Join(dir, "a.yaml"), experiments.Options{Set: []string{"embedding.vocabulary=task"}}); err == nil || !strings.Contains(err.Error(), "want all or dataset") {
		t.Errorf("vocabulary task: %v, want it refused", err)
	}
}

// TestAnalysisUsesTheTaskCandidates: in a run with utility cells, an
// analysis measures the mechanism its utility cells apply — SanText over
// the task's words, every split's (here 8: the test split adds good9 and
// bad9) — not one over the analysis's view of the training split (6).
func TestAnalysisUsesTheTaskCandidates(t *testing.T) {
	path, out := analysisConfig(t, `analysis:
  kind: query-attack
  list: [good1]
mechanisms:
  - name: santext
    epsilon: [1]
model:
  kind: baseline
train:
  epochs: 1
stages:
  - kind: utility-loss
    apply: [both]
`)
	corpus := filepath.Join(filepath.Dir(path), "data", "corpus")
	if err := os.RemoveAll(corpus); err != nil {
		t.Fatal(err)
	}
	for split, words := range map[string][2]string{"train": {"good1 good2 good3", "bad1 bad2 bad3"}, "test": {"good9 good1", "bad9 bad1"}} {
		for c, class := range []string{"pos", "neg"} {
			dir := filepath.Join(corpus, split, class)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 10; i++ {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.txt", i)), []byte(words[c]), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	sum := runConfig(t, path)
	store, err := results.OpenStore(out)
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := store.Records(sum.Keys())
	var outputs float64
	var candidates []int
	for _, r := range recs {
		switch {
		case r.Cell.Analysis == "query-attack":
			outputs = r.Analysis.Stat("outputs good1")
		case r.Cell.Mechanism == "santext":
			for _, p := range r.Privacy {
				candidates = append(candidates, p.CandidateCount)
			}
		}
	}
	if outputs != 8 || len(candidates) == 0 || slices.ContainsFunc(candidates, func(n int) bool { return n != 8 }) {
		t.Errorf("the analysis's SanText has %v outputs, the utility cells' %v: want the task's 8 words for both", outputs, candidates)
	}
}

// TestAgreements: a claims file's verdicts are computed from the records
// of its runs — a claim on a run holds or fails by its rule, one whose
// run has no folder is "not run here" — and a run folder whose plan is
// not the config with the overrides the file names is refused, naming
// the first difference.
func TestAgreements(t *testing.T) {
	path, _ := analysisConfig(t, `analysis:
  kind: plausible-deniability
  words: 10
  draws: 50
mechanisms:
  - name: laplace
    epsilon: [0.5, 50]
seeds: [1, 2, 3]
`)
	runConfig(t, path)
	dir := filepath.Dir(path)
	file := func(set string) string {
		return `records: .
papers: [{id: p, cite: P}]
runs:
  - {name: out-a, config: a.yaml` + set + `}
  - {name: nowhere, config: a.yaml}
claims:
  - {paper: p, item: up, cites: here, kind: conclusion, says: N_w grows with ε, rule: increasing, stat: N_w mean, run: out-a,
     points: [{analysis: plausible-deniability, setting: laplace, epsilon: 0.5}, {analysis: plausible-deniability, setting: laplace, epsilon: 50}]}
  - {paper: p, item: down, cites: here, kind: conclusion, says: N_w falls with ε, rule: decreasing, stat: N_w mean, run: out-a,
     points: [{analysis: plausible-deniability, setting: laplace, epsilon: 0.5}, {analysis: plausible-deniability, setting: laplace, epsilon: 50}]}
  - {paper: p, item: elsewhere, cites: here, kind: sanity, says: read from a run that is not here, rule: at-least, threshold: 0, stat: N_w mean, run: nowhere,
     points: [{analysis: plausible-deniability, setting: laplace, epsilon: 50}]}
`
	}
	cp := filepath.Join(dir, "claims.yaml")
	if err := os.WriteFile(cp, []byte(file("")), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := claims.Read(cp)
	if err != nil {
		t.Fatal(err)
	}
	as, err := f.Decide()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range as {
		got = append(got, a.Verdict)
		if a.Claim.Item != "elsewhere" && (len(a.Values) != 1 || len(a.Values[0]) != 2 || a.Values[0][0].Seeds != 3) {
			t.Errorf("%s: values %+v, want two of 3 seeds", a.Claim.Item, a.Values)
		}
	}
	if want := []string{claims.Holds, claims.Fails, claims.NotRun}; !slices.Equal(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	if err := os.WriteFile(cp, []byte(file(", set: [analysis.draws=60], reduced: fewer")), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err = claims.Read(cp); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Decide(); err == nil || !strings.Contains(err.Error(), "draws") || !strings.Contains(err.Error(), "60") {
		t.Errorf("a run made with 50 draws read as one of 60: %v, want it refused naming draws", err)
	}
}

// TestMatchedPrivacy: per mechanism the stage finds the ε at which the
// context-free attacker recovers the target, runs the attack and a
// utility cell there (recorded under its own key, reused by a second
// run), and reads the accuracy against the seed's baseline.
func TestMatchedPrivacy(t *testing.T) {
	path, out := analysisConfig(t, `analysis:
  kind: reconstruction
  sentences: 20
  test: 10
  epochs: 1
  hidden: 8
  vocab: 50
mechanisms:
  - name: laplace
    epsilon: [1]
  - name: santext
    epsilon: [1]
  - name: custext
    epsilon: [1]
    params: {k: 3}
seeds: [1]
model:
  kind: baseline
train:
  epochs: 1
stages:
  - kind: matched-privacy
    target: 50
    tolerance: 0.1
    apply: train
`)
	sum := runConfig(t, path)
	// Three reconstruction cells and the baseline; the utility cells at
	// the ε found are the stage's. CusText's integer k comes back from the
	// records as a float: the stage must build the mechanism all the same.
	if sum.Ran != 4 || len(sum.Stages) != 3 {
		t.Fatalf("ran %d cells, %d stage results", sum.Ran, len(sum.Stages))
	}
	c, err := experiments.Load(path, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), c, SessionOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	store, err := results.OpenStore(out)
	if err != nil {
		t.Fatal(err)
	}
	base := math.NaN()
	for _, cs := range sum.Cells {
		if cs.Cell.Mode == "none" {
			r, _, _ := store.Get(cs.Key)
			base = r.Test.Accuracy
		}
	}
	for _, st := range sum.Stages {
		r, _, _ := store.Get(st.Key)
		if st.Status != "ok" || r.Analysis == nil {
			t.Fatalf("%s: %s %s", st.Cell, st.Status, st.Error)
		}
		a := r.Analysis
		eps, matched := a.Stat("ε"), a.Stat("matched recovery %")
		free, copying := a.Stat("context-free recovery %"), a.Stat("unchanged %")
		if math.Abs(matched-50) > 5 || matched != max(free, copying) {
			t.Errorf("%s: recovery %v at ε %v (context-free %v, copying %v), want 50 ± 5, the stronger of the two (notes %v)", st.Cell, matched, eps, free, copying, a.Notes)
		}
		// The search's objective is the stronger of the attack's own
		// context-free attacker and copying at the ε found.
		at := st.Cell
		at.Analysis, at.Epsilon = "reconstruction", eps
		env, _, err := s.an.analysisEnv(at)
		if err != nil {
			t.Fatal(err)
		}
		if r, _, err := analysis.ContextFreeRecovery(context.Background(), c.Analysis.Params, env); err != nil || r.ContextFree != free || r.Copy != copying {
			t.Errorf("%s: recovery %+v (%v) at ε %v, the stage says context-free %v, copying %v", st.Cell, r, err, eps, free, copying)
		}
		u := experiments.Cell{Mechanism: st.Cell.Mechanism, Params: st.Cell.Params, Epsilon: eps, Mode: "train", Seed: 1}
		ur, ok, _ := store.Get(s.Key(u))
		if !ok || ur.Status != "ok" {
			t.Fatalf("%s: no utility cell recorded at ε %v", st.Cell, eps)
		}
		if a.Stat("accuracy") != ur.Test.Accuracy || a.Stat("baseline accuracy") != base || a.Stat("Δ accuracy") != ur.Test.Accuracy-base {
			t.Errorf("%s: accuracy %v, baseline %v, Δ %v; utility cell %v, baseline cell %v", st.Cell, a.Stat("accuracy"), a.Stat("baseline accuracy"), a.Stat("Δ accuracy"), ur.Test.Accuracy, base)
		}
	}
	// The attack's tagger trains on the config's device (it was fixed to
	// the CPU whatever the config said).
	attack := sum.Stages[0].Cell
	attack.Analysis, attack.Epsilon = "reconstruction", 1
	if env, _, err := s.an.analysisEnv(attack); err != nil || env.Device != s.dev {
		t.Errorf("the analyses' device %v (%v), the session's %v", env.Device, err, s.dev)
	}
	// The stage's utility cells are the run's: listed in its summary, in
	// cells.csv, counted among the models trained (the baseline's and
	// three), never stale records to prune.
	if len(sum.StageCells) != 3 || sum.Trained != 4 {
		t.Errorf("%d stage cells, %d models trained; want 3, 4", len(sum.StageCells), sum.Trained)
	}
	cells, err := os.ReadFile(filepath.Join(out, "tables", "cells.csv"))
	if err != nil || strings.Count(string(cells), ",matched-privacy,") != 3 {
		t.Errorf("cells.csv lacks the stage's utility cells (%v):\n%s", err, cells)
	}
	// The stage's table heads one column ε: the one it found.
	md, err := os.ReadFile(filepath.Join(out, "tables", "analysis.md"))
	if err != nil {
		t.Fatal(err)
	}
	heads := 0
	for _, line := range strings.Split(string(md), "\n") {
		if strings.Contains(line, "| probes |") {
			heads++
			if n := strings.Count(line, "| ε |"); n != 1 {
				t.Errorf("the stage's table heads ε %d times: %s", n, line)
			}
		}
	}
	if heads != 1 {
		t.Errorf("%d stage tables in analysis.md:\n%s", heads, md)
	}
	st, err := rundir.ReadState(out)
	if err != nil {
		t.Fatal(err)
	}
	if stale, err := st.Stale(); err != nil || len(stale) != 0 {
		t.Errorf("stale records %v (%v): the stage's cells are the run's", stale, err)
	}
	again := runConfig(t, path)
	if len(again.StageCells) != 3 || again.Trained != 0 {
		t.Errorf("second run: %d stage cells, %d models trained; want 3, 0", len(again.StageCells), again.Trained)
	}
	for _, st := range again.Stages {
		if again.Ran != 0 || st.Status != "cached" {
			t.Errorf("second run: %d cells ran, %s %s", again.Ran, st.Cell, st.Status)
		}
	}
	// A changed target searches again; the attack cells stay.
	third := runConfig(t, path, "stages.0.target=70")
	for _, st := range third.Stages {
		if third.Ran != 0 || st.Status != "ok" {
			t.Errorf("target changed: %d cells ran, %s %s", third.Ran, st.Cell, st.Status)
		}
	}
}

// TestMatchedPrivacySeeds: the matched stage over three seeds is one line
// of the utility table (results.md, with the found ε's interval), its
// cells are in long.csv, and the analysis table gives the ε and accuracy
// an interval; under one seed it warns instead.
func TestMatchedPrivacySeeds(t *testing.T) {
	body := `analysis:
  kind: reconstruction
  sentences: 20
  test: 10
  epochs: 1
  hidden: 8
  vocab: 50
mechanisms:
  - name: laplace
    epsilon: [1]
seeds: [1, 2, 3]
model:
  kind: baseline
train:
  epochs: 1
stages:
  - kind: matched-privacy
    target: 50
    tolerance: 0.1
    apply: train
`
	path, out := analysisConfig(t, body)
	sum := runConfig(t, path)
	if len(sum.Stages) != 3 || len(sum.StageCells) != 3 {
		t.Fatalf("%d stage results, %d stage cells", len(sum.Stages), len(sum.StageCells))
	}
	md, err := os.ReadFile(filepath.Join(out, "tables", "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`\| laplace \| metric-dp \| train \| [0-9.]+ ± [0-9.e-]+ \(matched-privacy\) \| 3 \| 0\.\d{4} ± 0\.\d{4} \| \[`)
	if !line.Match(md) {
		t.Errorf("results.md lacks the stage's line over three seeds:\n%s", md)
	}
	long, err := os.ReadFile(filepath.Join(out, "tables", "long.csv"))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	keyAt, stageAt := slices.Index(table.LongHeader, "key"), slices.Index(table.LongHeader, "stage")
	for _, l := range strings.Split(string(long), "\n") {
		if f := strings.Split(l, ","); len(f) == len(table.LongHeader) && f[stageAt] == "matched-privacy" && f[0] == "utility" {
			keys[f[keyAt]] = true
		}
	}
	if len(keys) != 3 {
		t.Errorf("long.csv holds %d stage cells, want 3:\n%s", len(keys), long)
	}
	// The reader of a run folder (xp results, the report) sees the same line.
	_, rows, stats, err := rundir.ReadTables(out)
	if err != nil {
		t.Fatal(err)
	}
	var stage *results.Row
	for i := range rows {
		if rows[i].Stage == "matched-privacy" {
			stage = &rows[i]
		}
	}
	if stage == nil || stage.Seeds != 3 || math.IsNaN(stage.EpsCI) || math.IsNaN(stage.AccCI) || stage.DiffSeeds != 3 {
		t.Errorf("the stage's line as read back: %+v", stage)
	}
	for _, r := range stats {
		if r.Analysis == "matched-privacy" {
			if i := slices.Index(r.Names, "accuracy"); i < 0 || math.IsNaN(r.CI[i]) || r.Seeds != 3 {
				t.Errorf("matched row over %d seeds without an accuracy interval: %+v", r.Seeds, r)
			}
		}
	}
	if a, _ := os.ReadFile(filepath.Join(out, "tables", "analysis.md")); strings.Contains(string(a), "fewer than 3 seeds") {
		t.Errorf("a warning of few seeds over three:\n%s", a)
	}
	// One seed: the analysis table says it cannot give an interval.
	path, out = analysisConfig(t, strings.Replace(body, "seeds: [1, 2, 3]", "seeds: [1]", 1))
	runConfig(t, path)
	if a, _ := os.ReadFile(filepath.Join(out, "tables", "analysis.md")); !strings.Contains(string(a), "Warning: fewer than 3 seeds") {
		t.Errorf("no warning of one seed:\n%s", a)
	}
}

// TestEveryStageRun: each stage spec describes has one kind here, with
// its jobs, and nothing is registered that spec does not describe; a kind
// that prices its results has both its work and its price.
func TestEveryStageRun(t *testing.T) {
	names := spec.Names(spec.Stage)
	seen := map[string]bool{}
	for _, k := range stageKinds {
		if seen[k.name] || k.jobs == nil || !slices.Contains(names, k.name) {
			t.Errorf("stage %s: registered twice, without jobs, or not described by spec", k.name)
		}
		if (k.work == nil) != (k.price == nil) {
			t.Errorf("stage %s: work without a price or a price without work", k.name)
		}
		seen[k.name] = true
	}
	for _, n := range names {
		if !seen[n] {
			t.Errorf("spec describes stage %s; the runner does not run it", n)
		}
	}
}

// TestCommonNoise: under common_noise the analysis cells that draw one
// noise (Laplace and Vickrey's t at an ε; Mahalanobis and Vickrey with
// its λ) draw once for all: the first cell of each group makes the
// draws, the others find theirs in the draws cache (no draws of their
// own), and every cell's numbers equal those of a run of that cell alone
// (fresh cache). Laplace's numbers are those of a run without
// common_noise; Vickrey's come from Laplace's streams, not their own, and
// their records say so. The dry run prices a group's draws once.
func TestCommonNoise(t *testing.T) {
	const body = `analysis:
  kind: bayes-adversary
  samples: 200
mechanisms:
  - name: laplace
    epsilon: [1, 5]
  - name: vickrey
    epsilon: [1, 5]
    grid: {t: [0.25, 1]}
  - name: vickrey
    epsilon: [5]
    grid: {t: [0.5], lambda: [0.3]}
  - name: mahalanobis
    epsilon: [5]
    grid: {lambda: [0.3]}
seeds: [1]
common_noise: true
`
	records := func(path string, sets ...string) map[string]results.Record {
		t.Helper()
		out := map[string]results.Record{}
		for _, r := range runRecords(t, path, runConfig(t, path, sets...), sets...) {
			out[r.Cell.String()] = r
		}
		return out
	}
	path, _ := analysisConfig(t, body)
	// the dry run prices each group's draws once: 3 groups of 8 cells
	lookups := map[bool]int64{}
	for _, common := range []bool{false, true} {
		c, err := experiments.Load(path, experiments.Options{Set: []string{fmt.Sprintf("common_noise=%v", common)}})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Run(context.Background(), c, Options{DryRun: true})
		if err != nil || sum.Estimate == nil {
			t.Fatalf("dry run: %v", err)
		}
		lookups[common] = sum.Estimate.AnalysisLookups
	}
	if lookups[false] == 0 || lookups[true]*8 != lookups[false]*3 {
		t.Errorf("the dry run's lookups: %d without common_noise, %d with: want 3 of 8", lookups[false], lookups[true])
	}
	all := records(path)
	if len(all) != 8 {
		t.Fatalf("%d records, want 8", len(all))
	}
	var drew []string
	for name, r := range all {
		if r.Provenance.WorkUnits > 0 {
			drew = append(drew, name)
		}
	}
	slices.Sort(drew)
	// three groups (Laplace's noise at ε = 1 and 5, Mahalanobis's at
	// λ = 0.3, ε = 5): one cell of each draws
	if len(drew) != 3 {
		t.Errorf("cells that drew: %v, want one per group (3)", drew)
	}
	for _, alone := range []struct{ cell, body string }{
		{"bayes-adversary: vickrey t=1 ε=5 seed=1", "  - name: vickrey\n    epsilon: [5]\n    grid: {t: [1]}\n"},
		{"bayes-adversary: vickrey lambda=0.3 t=0.5 ε=5 seed=1", "  - name: vickrey\n    epsilon: [5]\n    grid: {t: [0.5], lambda: [0.3]}\n"},
		{"bayes-adversary: laplace ε=5 seed=1", "  - name: laplace\n    epsilon: [5]\n"},
	} {
		p, _ := analysisConfig(t, "analysis:\n  kind: bayes-adversary\n  samples: 200\nmechanisms:\n"+alone.body+"seeds: [1]\ncommon_noise: true\n")
		one := records(p)
		r, ok := one[alone.cell]
		if !ok || len(one) != 1 {
			t.Fatalf("run of %s alone: records %v", alone.cell, slices.Collect(maps.Keys(one)))
		}
		if !reflect.DeepEqual(r.Analysis.Stats, all[alone.cell].Analysis.Stats) {
			t.Errorf("%s: alone %+v, beside its group %+v", alone.cell, r.Analysis.Stats, all[alone.cell].Analysis.Stats)
		}
	}
	for name, r := range all {
		noted := slices.ContainsFunc(r.Analysis.Notes, func(n string) bool { return strings.HasPrefix(n, "common_noise: drawn from the streams of ") })
		if noted != (r.Cell.Mechanism == "vickrey") {
			t.Errorf("%s: noted as drawn from another's streams: %v (notes %q)", name, noted, r.Analysis.Notes)
		}
	}
	own := records(path, "common_noise=false", "output="+t.TempDir(), "cache="+t.TempDir())
	for name, r := range all {
		same := reflect.DeepEqual(r.Analysis.Stats, own[name].Analysis.Stats)
		if vickrey := r.Cell.Mechanism == "vickrey"; same == vickrey {
			t.Errorf("%s: the same numbers with and without common_noise: %v, want %v", name, same, !vickrey)
		}
	}
}

// TestEveryAnalysisEveryMechanism: every analysis that runs a mechanism,
// with every mechanism spec describes, on the fixture's data either is
// refused before it runs (the config, naming why) or records finite
// numbers — no NaN in any statistic — and a cell that fails says why on
// one line. (1-Diffractor under the Bayes adversary recorded E_M NaN as
// a success.)
func TestEveryAnalysisEveryMechanism(t *testing.T) {
	params := map[string]string{
		"query-attack":   "  list: [good1]\n",
		"examples":       "  list: [good1]\n",
		"reconstruction": "  test: 8\n  sentences: 20\n  epochs: 1\n  hidden: 4\n",
	}
	ran := 0
	for _, a := range spec.All(spec.Analysis) {
		if !a.Epsilon {
			continue
		}
		for _, m := range spec.Names(spec.Mechanism) {
			body := fmt.Sprintf("analysis:\n  kind: %s\n%smechanisms:\n  - name: %s\n    epsilon: [50]\n", a.Name, params[a.Name], m)
			path, _ := analysisConfig(t, body)
			c, err := experiments.Load(path, experiments.Options{})
			if err != nil {
				continue // refused before it runs, at the config
			}
			sum, err := Run(context.Background(), c, Options{})
			if err != nil {
				t.Errorf("%s × %s: %v", a.Name, m, err)
				continue
			}
			for _, cs := range sum.Cells {
				if cs.Status != "ok" && (cs.Error == "" || strings.Contains(cs.Error, "\n")) {
					t.Errorf("%s × %s: failed without a one-line reason: %q", a.Name, m, cs.Error)
				}
			}
			for _, r := range sum.Stats {
				for i, n := range r.Names {
					if math.IsNaN(r.Mean[i]) {
						t.Errorf("%s × %s: %s is NaN", a.Name, m, n)
					}
				}
			}
			ran++
		}
	}
	if ran < 40 {
		t.Errorf("only %d analysis × mechanism pairs ran", ran)
	}
}
