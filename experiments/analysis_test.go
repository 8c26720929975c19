package experiments

import (
	"github.com/xp-nlp/xp/spec"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const goodPD = `name: pd
embedding:
  path: e.vec
analysis:
  kind: plausible-deniability
  words: 25
  draws: 100
mechanisms:
  - name: laplace
    epsilon: [1, 5, 10]
  - name: vickrey
    epsilon: [1]
    grid:
      t: [0.25, 0.75]
seeds: [1, 2]
`

func TestAnalysisCells(t *testing.T) {
	c := parse(t, goodPD)
	cells := c.Cells()
	// (3 laplace ε + 2 vickrey t × 1 ε) × 2 seeds
	if len(cells) != 10 {
		t.Fatalf("%d cells: %v", len(cells), cells)
	}
	if cells[0].Analysis != "plausible-deniability" || cells[0].Mode != "" || cells[0].Privatizes("train") || cells[0].Privatizes("test") {
		t.Errorf("cell 0: %+v", cells[0])
	}
	if got := cells[0].String(); got != "plausible-deniability: laplace ε=1 seed=1" {
		t.Errorf("String = %q", got)
	}
	if c.ReadsDataset() {
		t.Error("plausible deniability over the embedding's words with Laplace reads no dataset")
	}
	if v := c.AnalysisParams(); v.Int("draws") != 100 || v.String("from") != "embedding" {
		t.Errorf("params %v", v)
	}
	n := parse(t, "embedding:\n  path: e.vec\nanalysis:\n  kind: neighbours\nseeds: [1, 2]\n")
	if cells := n.Cells(); len(cells) != 2 || cells[1].String() != "neighbours seed=2" || cells[1].Mechanism != "" {
		t.Errorf("neighbours cells: %v", cells)
	}
}

// TestAnalysisKeyInputs: an analysis record does not depend on the model,
// training or apply sections, nor on the dataset when the analysis reads
// none; it does depend on the analysis parameters, the vectors and the
// cell's coordinates.
func TestAnalysisKeyInputs(t *testing.T) {
	base := parse(t, goodPD)
	cell := base.Cells()[0]
	in := Inputs{Data: "d", Embedding: "e"}
	want := base.Key(cell, in)
	for _, set := range []string{"model.hidden=64", "model.kind=baseline", "train.epochs=9", "train.max_len=12",
		"dataset.name=sst2", "dataset.train_limit=10", "tokenizer=whitespace", "workers=2"} {
		c := parse(t, goodPD, set)
		if c.Key(c.Cells()[0], in) != want {
			t.Errorf("--set %s changed the analysis key", set)
		}
	}
	if base.Key(cell, Inputs{Data: "other", Embedding: "e"}) != want {
		t.Error("the data checksum changed the key of an analysis that reads no data")
	}
	for _, set := range []string{"analysis.draws=1000", "analysis.words=26", "analysis.exact=false", "embedding.top=100", "device=cuda"} {
		c := parse(t, goodPD, set)
		if c.Key(c.Cells()[0], in) == want {
			t.Errorf("--set %s left the analysis key", set)
		}
	}
	if base.Key(cell, Inputs{Data: "d", Embedding: "e2"}) == want {
		t.Error("the vectors' checksum left the key")
	}
	// Reading the dataset puts it in the key.
	ds := parse(t, goodPD, "analysis.from=dataset", "dataset.name=sst2")
	k := ds.Key(ds.Cells()[0], in)
	for _, set := range []string{"dataset.train_limit=10", "tokenizer=whitespace"} {
		c := parse(t, goodPD, "analysis.from=dataset", "dataset.name=sst2", set)
		if c.Key(c.Cells()[0], in) == k {
			t.Errorf("--set %s left the key of an analysis that reads the dataset", set)
		}
	}
	if ds.Key(ds.Cells()[0], Inputs{Data: "other", Embedding: "e"}) == k {
		t.Error("the data checksum left the key of an analysis that reads the dataset")
	}
	// Every leaf of the analysis section is a key input.
	for _, leaf := range leaves(reflect.TypeOf(Config{}), nil) {
		if leaf[0] != "analysis" || slices.Contains(leaf, "*") {
			continue
		}
		c := base.Clone()
		mutate(t, reflect.ValueOf(c).Elem(), leaf)
		if c.Key(cell, in) == want {
			t.Errorf("analysis leaf %s left the key", strings.Join(leaf, "."))
		}
	}
}

// bayesTwitter is an analysis config on a sentence dataset (10 lines).
const bayesTwitter = "dataset:\n  name: twitter\nembedding:\n  path: e.vec\nanalysis:\n  kind: bayes-adversary\nmechanisms:\n  - name: laplace\n    epsilon: [1]\n"

func TestAnalysisErrors(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"unknown analysis", "embedding:\n  path: e.vec\nanalysis:\n  kind: membership\n", `x.yaml:4: unknown analysis "membership" (known: bayes-adversary, dp-audit, examples, mapping, neighbours, plausible-deniability, query-attack, reconstruction)`},
		{"kind missing", "embedding:\n  path: e.vec\nanalysis:\n  draws: 3\n", "x.yaml:3: analysis.kind is required"},
		{"bad param", "embedding:\n  path: e.vec\nanalysis:\n  kind: neighbours\n  k: [0, 5]\n", "x.yaml:5: neighbours: parameter k = [0 5], want a list of integers in [1, ∞)"},
		{"ε without mechanisms", "embedding:\n  path: e.vec\nanalysis:\n  kind: plausible-deniability\n", "x.yaml:4: analysis plausible-deniability runs mechanisms: give at least one"},
		{"mechanisms for geometry", "embedding:\n  path: e.vec\nanalysis:\n  kind: neighbours\nmechanisms:\n  - name: laplace\n    epsilon: [1]\n", "x.yaml:5: analysis neighbours reads only the vectors: it takes no mechanisms"},
		{"apply", "embedding:\n  path: e.vec\nanalysis:\n  kind: neighbours\napply: [test]\n", "x.yaml:5: apply has no meaning for analysis neighbours"},
		{"dataset needed", "embedding:\n  path: e.vec\nanalysis:\n  kind: bayes-adversary\nmechanisms:\n  - name: laplace\n    epsilon: [1]\n", "x.yaml:4: analysis bayes-adversary with these mechanisms reads a dataset (word counts): dataset.name is required"},
		{"custext needs counts", "embedding:\n  path: e.vec\nanalysis:\n  kind: query-attack\nmechanisms:\n  - name: custext\n    epsilon: [1]\n", "x.yaml:4: analysis query-attack with these mechanisms reads a dataset"},
		{"list without from", "embedding:\n  path: e.vec\nanalysis:\n  kind: plausible-deniability\n  list: [happy]\nmechanisms:\n  - name: laplace\n    epsilon: [1]\n", "x.yaml:5: plausible-deniability: list is given but words are sampled from embedding (set from: list)"},
		{"from list without list", "embedding:\n  path: e.vec\nanalysis:\n  kind: plausible-deniability\n  from: list\nmechanisms:\n  - name: laplace\n    epsilon: [1]\n", "x.yaml:5: plausible-deniability: from: list needs list"},
		{"stages without analysis", "dataset:\n  name: sst2\nembedding:\n  path: e.vec\nmechanisms:\n  - name: laplace\n    epsilon: [1]\nstages:\n  - kind: select\n", "x.yaml:8: stages combine the cells of an analysis"},
		{"unknown stage", bayesTwitter + "stages:\n  - kind: pareto\n", `x.yaml:11: unknown stage "pareto" (known: epsilon-search, matched-privacy, select, utility-loss)`},
		{"budget required", bayesTwitter + "stages:\n  - kind: utility-loss\n  - kind: select\n    loss: L_M both\n", "x.yaml:12: select: parameter budget is required"},
		{"lexicon loss on sentences", bayesTwitter + "stages:\n  - kind: select\n    budget: 0.1\n", "x.yaml:11: loss L_M flip is the opinion lexicon's; for dataset twitter add a utility-loss stage"},
		{"loss mode not computed", bayesTwitter + "stages:\n  - kind: utility-loss\n    apply: [test]\n  - kind: select\n    budget: 0.1\n    loss: L_M both\n", "x.yaml:15: loss L_M both needs a utility-loss stage before this one with both in its apply"},
		{"select paper without t = 0", "dataset:\n  name: opinion\nembedding:\n  path: e.vec\nanalysis:\n  kind: bayes-adversary\nmechanisms:\n  - name: vickrey\n    epsilon: [1, 2]\n    grid:\n      t: [0.5, 1]\nstages:\n  - kind: select\n    budget: 0.1\n", "x.yaml:8: select procedure paper starts from t = 0 (Laplace) and doubles ε: mechanism vickrey has no setting with t = 0"},
		{"select needs bayes", "embedding:\n  path: e.vec\nanalysis:\n  kind: examples\nmechanisms:\n  - name: laplace\n    epsilon: [1]\nstages:\n  - kind: select\n    budget: 0.1\n", "x.yaml:9: select maximizes E_M: it needs analysis bayes-adversary (not examples)"},
		{"search needs examples", bayesTwitter + "stages:\n  - kind: epsilon-search\n    targets: [0.1]\n", "x.yaml:11: epsilon-search shows the examples at the ε found: it needs analysis examples"},
		{"search bracket", "embedding:\n  path: e.vec\nanalysis:\n  kind: examples\nmechanisms:\n  - name: laplace\n    epsilon: [1]\nstages:\n  - kind: epsilon-search\n    targets: [0.1]\n    lo: 5\n    hi: 1\n", "x.yaml:11: epsilon-search: lo 5 must be below hi 1"},
		{"matched needs reconstruction", bayesTwitter + "stages:\n  - kind: matched-privacy\n    target: 50\n", "x.yaml:11: matched-privacy matches on its attackers that need no training (copying, context-free) and runs the whole attack at the ε found: it needs analysis reconstruction (not bayes-adversary)"},
		{"matched target", "dataset:\n  name: sst2\nembedding:\n  path: e.vec\nanalysis:\n  kind: reconstruction\nmechanisms:\n  - name: laplace\n    epsilon: [1]\nstages:\n  - kind: matched-privacy\n    target: 100\n", "x.yaml:12: matched-privacy: parameter target = 100, want a number in (0, 100)"},
		{"stage twice", bayesTwitter + "stages:\n  - kind: utility-loss\n  - kind: utility-loss\n", "x.yaml:12: stage utility-loss is given twice"},
		{"mapping of laplace", "dataset:\n  name: sst2\nembedding:\n  path: e.vec\nanalysis:\n  kind: mapping\nmechanisms:\n  - name: custext\n    epsilon: [1]\n  - name: laplace\n    epsilon: [1]\n", "x.yaml:10: analysis mapping measures CusText's output sets: mechanism laplace has none"},
		{"privacy in an analysis", bayesTwitter + "privacy:\n  top: 10\n", "x.yaml:10: privacy measures are computed beside utility cells; analysis bayes-adversary computes its own statistics"},
		{"privacy measure unknown", "dataset:\n  name: sst2\nembedding:\n  path: e.vec\nmechanisms:\n  - name: laplace\n    epsilon: [1]\nprivacy:\n  measures: [recall]\n", "x.yaml:9: privacy: parameter measures = [\"recall\"], want a list of at least 1 words among deniability, recovery"},
		{"privacy draws", "dataset:\n  name: sst2\nembedding:\n  path: e.vec\nmechanisms:\n  - name: laplace\n    epsilon: [1]\nprivacy:\n  draws: 0\n", "x.yaml:9: privacy: parameter draws = 0, want an integer in [1, ∞)"},
		{"privacy empty", "dataset:\n  name: sst2\nembedding:\n  path: e.vec\nmechanisms:\n  - name: laplace\n    epsilon: [1]\nprivacy:\n", "x.yaml:8: privacy has no value"},
		{"empty word", "embedding:\n  path: e.vec\nanalysis:\n  kind: examples\n  list: [\"\"]\nmechanisms:\n  - name: laplace\n    epsilon: [1]\n", "x.yaml:5: examples: parameter list = [\"\"], want a list of at least 1 words"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(c.text), Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant %q", err, c.want)
			}
		})
	}
}

// TestStageCells: a utility-loss stage adds the baseline and its apply
// modes' utility cells after the analysis cells, and leaves the analysis
// cells' keys as they were.
func TestStageCells(t *testing.T) {
	plain, err := Parse("x.yaml", []byte(bayesTwitter+"seeds: [1, 2]\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	staged, err := Parse("x.yaml", []byte(bayesTwitter+"seeds: [1, 2]\nstages:\n  - kind: utility-loss\n    apply: [test, both]\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range staged.Cells() {
		got = append(got, c.String())
	}
	want := []string{"bayes-adversary: laplace ε=1 seed=1", "bayes-adversary: laplace ε=1 seed=2", "baseline seed=1", "baseline seed=2",
		"laplace ε=1 test seed=1", "laplace ε=1 test seed=2", "laplace ε=1 both seed=1", "laplace ε=1 both seed=2"}
	if !slices.Equal(got, want) {
		t.Errorf("cells %q\nwant %q", got, want)
	}
	in := Inputs{Data: "d", Embedding: "e"}
	for i, c := range plain.Cells() {
		if plain.Key(c, in) != staged.Key(staged.Cells()[i], in) {
			t.Errorf("%s: the stage changed the analysis cell's key", c)
		}
	}
}

// TestAnalysisRevision: an analysis's revision is in its cells' keys (a
// changed computation is not answered from older records); revision 0
// leaves the key as it was before revisions existed.
func TestAnalysisRevision(t *testing.T) {
	c, err := Parse("x.yaml", []byte("dataset:\n  name: sst2\nembedding:\n  path: e.vec\nanalysis:\n  kind: mapping\nmechanisms:\n  - name: custext\n    epsilon: [1]\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cell := c.Cells()[0]
	in := Inputs{Data: "d", Embedding: "e"}
	d, _ := spec.Lookup(spec.Analysis, "mapping")
	if d.Revision == 0 {
		t.Fatal("mapping has revision 0")
	}
	k := analysisKey{Version: Version, Analysis: cell.Analysis, AParams: c.AnalysisParams(), Mechanism: cell.Mechanism,
		Params: cell.Resolved(), Epsilon: cell.Epsilon, Seed: cell.Seed, Embedding: c.Embedding, Device: deviceKind(c.Device), Inputs: in}
	d2 := c.Dataset
	k.Dataset, k.Tokenizer = &d2, c.Tokenizer
	if hash(k) == c.Key(cell, in) {
		t.Error("the key without the revision equals the key")
	}
	k.Revision = d.Revision
	if hash(k) != c.Key(cell, in) {
		t.Error("the key is not the listed inputs with the revision")
	}
}
