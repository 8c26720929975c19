package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// errorCase is one bad input: the files it needs (relative to a fresh
// folder that also holds a good data root under data/), the command, and
// the message xp must give (the folder's path is shown as "").
type errorCase struct {
	input string // what is wrong, for docs/errors.md
	files map[string]string
	args  []string
	want  string
}

// goodConfig is a valid config over the data root errorsRoot writes; cases
// edit it.
const goodConfig = `name: demo
data: data
dataset:
  name: sst2
embedding:
  path: vectors.txt
mechanisms:
  - name: vickrey
    epsilon: [5, 10]
    params:
      t: 0.5
apply: [none, train, test]
train:
  epochs: 2
seeds: [1, 2]
`

func edit(old, new string) map[string]string {
	if !strings.Contains(goodConfig, old) {
		panic("goodConfig lacks " + old)
	}
	return map[string]string{"x.yaml": strings.Replace(goodConfig, old, new, 1)}
}

// bombLines are the lines of a YAML alias bomb after its first anchor a0
// (nine lines of ten aliases each to the anchor before).
func bombLines() string {
	var b strings.Builder
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "      a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	return b.String()
}

var glove3 = "the 0.1 0.2 0.3\nfilm 0.2 0.1 0.0\ngood 0.9 0.1 0.1\nbad -0.9 0.1 0.1\n"

var errorCases = []errorCase{
	{"a misspelt key", edit("seeds: [1, 2]", "sedes: [1, 2]"), []string{"run", "x.yaml"},
		`x.yaml:15: unknown key "sedes" in the config (known: analysis, apply, cache, checks, common_noise, data, dataset, device, embedding, mechanism_embedding, mechanisms, model, name, output, privacy, seeds, select, stages, threads, tokenizer, train, workers); did you mean "seeds"?`},
	{"a privacy measure that does not exist", edit("seeds: [1, 2]", "seeds: [1, 2]\nprivacy: {measures: [recall]}"), []string{"run", "x.yaml"},
		`x.yaml:16: privacy: parameter measures = ["recall"], want a list of at least 1 words among deniability, recovery`},
	{"a misspelt nested key", edit("  epochs: 2", "  epoch: 2"), []string{"run", "x.yaml"},
		`x.yaml:14: unknown key "epoch" in train (known: batch, epochs, max_len, patience); did you mean "epochs"?`},
	{"a model key under train", edit("  epochs: 2", "  epochs: 2\n  lr: 0.01"), []string{"run", "x.yaml"},
		`x.yaml:15: unknown key "lr" in train (known: batch, epochs, max_len, patience); "lr" is a key of analysis and of model`},
	{"a fraction for an integer", edit("  epochs: 2", "  epochs: 1.9"), []string{"run", "x.yaml"},
		"x.yaml:14: train.epochs: 1.9 is not an integer"},
	{"a key without a value", edit("  epochs: 2", "  epochs:"), []string{"run", "x.yaml"},
		"x.yaml:14: train.epochs has no value"},
	{"zero epochs", edit("  epochs: 2", "  epochs: 0"), []string{"run", "x.yaml"},
		"x.yaml:14: train.epochs = 0, want ≥ 1"},
	{"no seeds", edit("seeds: [1, 2]", "seeds: []"), []string{"run", "x.yaml"},
		"x.yaml:15: seeds is empty: give at least one seed"},
	{"a tab indenting a line", edit("  name: sst2", "\tname: sst2"), []string{"run", "x.yaml"},
		"x.yaml:4: found character that cannot start any token: the line holds a tab; YAML indents with spaces only"},
	{"a mistyped mechanism", edit("name: vickrey", "name: vickery"), []string{"run", "x.yaml"},
		`x.yaml:8: unknown mechanism "vickery"; did you mean "vickrey"? (known: custext, custext+, diffractor, laplace, mahalanobis, santext, santext+, tem, truncated-gumbel, vickrey)`},
	{"a mistyped dataset", edit("  name: sst2", "  name: sst-2"), []string{"run", "x.yaml"},
		`x.yaml:4: unknown dataset "sst-2"; did you mean "sst2"? (known: imdb, sst2, qnli, twitter, opinion, enron, folder, table)`},
	{"a quoted number", edit("epsilon: [5, 10]", `epsilon: [5, "10"]`), []string{"run", "x.yaml"},
		`x.yaml:9: mechanisms.0.epsilon.1: "10" is not a number: remove the quotes (quoted, it is text)`},
	{"an infinite number", edit("train:", "model:\n  clip: .inf\ntrain:"), []string{"run", "x.yaml"},
		"x.yaml:14: model.clip: .inf is not a finite number"},
	{"evaluating on the training split", edit("  name: sst2", "  name: sst2\n  test: train"), []string{"run", "x.yaml"},
		`x.yaml:5: dataset.test is the training split "train": a model evaluated on its own training data measures nothing`},
	{"ε = 0", edit("[5, 10]", "[5, 0]"), []string{"run", "x.yaml"},
		"x.yaml:9: vickrey: ε = 0, want a finite value > 0"},
	{"ε = 0 given by --set", map[string]string{"x.yaml": goodConfig}, []string{"run", "--set", "mechanisms.0.epsilon=[0]", "x.yaml"},
		"x.yaml: --set mechanisms.0.epsilon=[0]: vickrey: ε = 0, want a finite value > 0"},
	{"an unknown mechanism", edit("name: vickrey", "name: gauss"), []string{"run", "x.yaml"},
		`x.yaml:8: unknown mechanism "gauss" (known: custext, custext+, diffractor, laplace, mahalanobis, santext, santext+, tem, truncated-gumbel, vickrey)`},
	{"a parameter out of range", edit("t: 0.5", "t: 1.5"), []string{"run", "x.yaml"},
		"x.yaml:11: vickrey: parameter t = 1.5, want a number in [0, 1]"},
	{"rank 0", edit("t: 0.5", "rank: 0"), []string{"run", "x.yaml"},
		"x.yaml:11: vickrey: parameter rank = 0, want an integer in [1, ∞)"},
	{"two variants at once", edit("t: 0.5", "t: 0.5\n      rank: 2"), []string{"run", "x.yaml"},
		"x.yaml:12: vickrey: t and rank are different variants: give at most one"},
	{"a parameter a mechanism does not take", edit("name: vickrey", "name: laplace"), []string{"run", "x.yaml"},
		`x.yaml:11: laplace: unknown parameter "t" (laplace takes no parameters)`},
	{"a parameter the model kind does not take", edit("train:", "model:\n  kind: baseline\n  hidden: 64\ntrain:"), []string{"run", "x.yaml"},
		`x.yaml:15: baseline: unknown parameter "hidden" (known: clip, dropout, fine_tune, head_hidden, lr)`},
	{"a model sweep listing a value twice", edit("train:", "model:\n  hidden: [64, 64]\ntrain:"), []string{"run", "x.yaml"},
		"x.yaml:14: model.hidden lists 64 twice"},
	{"select without a model sweep", edit("train:", "select:\n  best_by: valid\ntrain:"), []string{"run", "x.yaml"},
		"x.yaml:13: select chooses among the points of a model sweep, and no model parameter is a list (give one as [a, b])"},
	{"a --set into a list by name", map[string]string{"x.yaml": goodConfig}, []string{"run", "--set", "seeds.first=3", "x.yaml"},
		`x.yaml: --set seeds.first=3: "first": want an index below 2`},
	{"negative workers", map[string]string{"x.yaml": goodConfig}, []string{"run", "--set", "workers=-1", "x.yaml"},
		"x.yaml: --set workers=-1: workers = -1, want ≥ 1"},
	{"a missing embedding file", edit("vectors.txt", "glove.txt"), []string{"run", "x.yaml"},
		`x.yaml:6: embedding glove.txt: stat data/glove.txt: no such file or directory (data root "data"; set data: or XP_DATA)`},
	{"the user's file beside the config, named as if under the data root", map[string]string{"x.yaml": strings.Replace(goodConfig, "  name: sst2", "  name: table\n  path: mine.csv\n  test_fraction: 0.2", 1), "mine.csv": "text,label\nfine,pos\n"}, []string{"run", "x.yaml"},
		`x.yaml:5: dataset path: stat data/mine.csv: no such file or directory; mine.csv is beside the config: write ./mine.csv (paths are relative to the data root unless written ./ or ../)`},
	{"a file where the output folder should be", map[string]string{"x.yaml": goodConfig, "out": "a file"}, []string{"run", "--set", "output=out/run", "x.yaml"},
		"x.yaml: --set output=out/run: output out/run is not a writable folder: mkdir out: not a directory"},
	{"an output folder that holds the user's files", map[string]string{"x.yaml": goodConfig, "mine/notes.txt": "mine"}, []string{"run", "--set", "output=mine", "x.yaml"},
		"x.yaml: --set output=mine: output mine holds files that are no xp run (notes.txt): give the run an empty or new folder"},
	{"a system folder as the output", map[string]string{"x.yaml": goodConfig}, []string{"run", "--set", "output=/etc", "x.yaml"},
		"x.yaml: --set output=/etc: output /etc is a system folder (inside /etc): give the run a folder of its own"},
	{"a table whose test file is its training file", map[string]string{"x.yaml": strings.Replace(goodConfig, "  name: sst2", "  name: table\n  path: ./mine.csv\n  test_path: mine.csv", 1), "mine.csv": "text,label\nfine,pos\n", "data/mine.csv": "text,label\nfine,pos\n"}, []string{"run", "--set", "dataset.test_path=./mine.csv", "x.yaml"},
		"x.yaml: --set dataset.test_path=./mine.csv: dataset.test_path is the training file ./mine.csv: a model evaluated on its own training data measures nothing"},
	{"a table label that differs from another only by case", map[string]string{"x.yaml": strings.Replace(goodConfig, "  name: sst2", "  name: table\n  path: ./mine.csv\n  test_path: ./test.csv", 1), "mine.csv": "text,label\ngood film,pos\nbad film,neg\nfine film,Pos\n", "test.csv": "text,label\ngreat film,pos\ndull film,neg\n"}, []string{"run", "x.yaml"},
		`load table: mine.csv and test.csv: labels "Pos" (1 example: mine.csv:4) and "pos" (2 examples: mine.csv:2, test.csv:2) differ only by case or spacing: correct the examples, or pin the label set with dataset.labels: [Pos, neg, pos] to keep both as classes`},
	{"a pinned label set on a corpus that has its own", edit("  name: sst2", "  name: sst2\n  labels: [neg, pos]"), []string{"run", "x.yaml"},
		"x.yaml:5: dataset.labels pins the labels of your own data (table, folder); sst2's labels are its own"},
	{"a table whose test file is a copy of its training file", map[string]string{"x.yaml": strings.Replace(goodConfig, "  name: sst2", "  name: table\n  path: ./mine.csv\n  test_path: ./copy.csv", 1), "mine.csv": "text,label\ngood film,pos\nbad film,neg\nfine film,pos\ndull film,neg\n", "copy.csv": "text,label\ngood film,pos\nbad film,neg\nfine film,pos\ndull film,neg\n"}, []string{"run", "x.yaml"},
		"x.yaml:3: split test of table: 4 of its 4 examples are examples of train, word for word (case and spacing aside; the training file given twice?): a model evaluated on its own training data measures nothing"},
	{"a table whose test file is its training file but for case and spacing", map[string]string{"x.yaml": strings.Replace(goodConfig, "  name: sst2", "  name: table\n  path: ./mine.csv\n  test_path: ./copy.csv", 1), "mine.csv": "text,label\ngood film,pos\nbad film,neg\nfine film,pos\ndull film,neg\n", "copy.csv": "text,label\nGood film ,pos\nbad  Film,neg\nfine film  ,pos\nDULL film,neg\n"}, []string{"run", "x.yaml"},
		"x.yaml:3: split test of table: 4 of its 4 examples are examples of train, word for word (case and spacing aside; the training file given twice?): a model evaluated on its own training data measures nothing"},
	{"a folder that is no run, for xp report", map[string]string{"mine/manifest.json": "{}", "mine/report.html": "my page"}, []string{"report", "mine"},
		"xp report: mine is no xp run folder (xp marks its own): name the page with --out FILE.html"},
	{"a system folder as the cache", map[string]string{"x.yaml": goodConfig}, []string{"run", "--set", "cache=/etc", "x.yaml"},
		"x.yaml: --set cache=/etc: cache /etc is a system folder (inside /etc): give xp a cache folder of its own (runs/cache by default)"},
	{"a cache folder that holds the user's files", map[string]string{"x.yaml": goodConfig, "mine/rates.json": "{}", "mine/notes.txt": "mine"}, []string{"run", "--set", "cache=mine", "x.yaml"},
		"x.yaml: --set cache=mine: cache mine holds files that are not xp's cache (notes.txt): give xp an empty or new folder"},
	{"a YAML alias bomb", map[string]string{"x.yaml": "name: bomb\nmechanisms:\n  - name: laplace\n    epsilon: [1]\n    params:\n      a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + bombLines()}, []string{"run", "x.yaml"},
		"x.yaml:11: document too large: its aliases (the alias here) expand it past 200000 nodes"},
	{"a run named ..", map[string]string{"x.yaml": goodConfig}, []string{"run", "--set", "name=..", "x.yaml"},
		`x.yaml: --set name=..: name "..": a folder's name, not . or .. (it names the output folder)`},
	{"vectors whose first row lost a value", map[string]string{"x.yaml": goodConfig, "data/vectors.txt": "the 0.1 0.2\n" + strings.Repeat("film 0.2 0.1 0.0\n", 1) + "good 0.9 0.1 0.1\nbad -0.9 0.1 0.1\n"}, []string{"run", "x.yaml"},
		"x.yaml:6: data/vectors.txt:1: row has 3 fields, want at least 4: a word and 3 numbers (dimension 3: 3 of the first 4 rows have 4 fields)"},
	{"a vector row with a number too many", map[string]string{"x.yaml": goodConfig, "data/vectors.txt": glove3 + "ugly 0.1 0.2 0.3 0.4\n"}, []string{"run", "x.yaml"},
		`x.yaml:6: data/vectors.txt:5: row has more than 3 numbers: what is left for the word, "ugly 0.1", ends in one (dimension 3: 4 of the first 5 rows have 4 fields); every row must have a word and exactly 3 numbers`},
	{"a vector with a non-number", map[string]string{"x.yaml": goodConfig, "data/vectors.txt": glove3 + "ugly 0.1 x 0.3\n"}, []string{"run", "x.yaml"},
		`x.yaml:6: data/vectors.txt:5: field "x" is not a finite number (want a word then 3 numbers)`},
	{"a truncated .vec file", map[string]string{"x.yaml": edit("vectors.txt", "v.vec")["x.yaml"], "data/v.vec": "9 3\n" + glove3}, []string{"run", "x.yaml"},
		"x.yaml:6: data/v.vec:6: header announces 9 vectors, file has 4 (truncated download?)"},
	{"a TSV row without its label", map[string]string{"x.yaml": goodConfig, "data/sst2/dev.tsv": "sentence\tlabel\ngood film\t1\nbad film\n"}, []string{"run", "x.yaml"},
		"load sst2: data/sst2/dev.tsv:3: row has 1 columns, header has 2 (sentence, label)"},
	{"a CSV with an unclosed quote", map[string]string{"x.yaml": edit("name: sst2", "name: twitter")["x.yaml"], "data/twitter/train.csv": "id,keyword,location,text,target\n1,,,\"fire,1\n2,,,ok,0\n"}, []string{"run", "x.yaml"},
		`load twitter: data/twitter/train.csv:3: extraneous or missing " in quoted-field (the quoted field starts on line 2)`},
	{"a cell xp privatize cannot find", map[string]string{"x.yaml": goodConfig}, []string{"privatize", "--eps", "7", "x.yaml"},
		`x.yaml: no cell matches (the cells that privatize test have settings "vickrey t=0.5"; ε 10, 5; seeds 1, 2)`},
	{"an unknown command", nil, []string{"train"}, `unknown command "train"`},
}

// errorsRoot writes a small valid data root: SST-2 and 3-d vectors.
func errorsRoot(t *testing.T, dir string) {
	for name, body := range map[string]string{
		"data/sst2/train.tsv": "sentence\tlabel\n" + strings.Repeat("good film\t1\nbad film\t0\nthe good\t1\nthe bad\t0\n", 10),
		"data/sst2/dev.tsv":   "sentence\tlabel\ngood\t1\nbad\t0\n",
		"data/vectors.txt":    glove3,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

// TestErrorMessages runs every bad input through the command line and
// keeps docs/errors.md equal to the messages (XP_UPDATE_DOCS=1 rewrites
// it).
func TestErrorMessages(t *testing.T) {
	var table strings.Builder
	table.WriteString("| bad input | command | message |\n|---|---|---|\n")
	for _, c := range errorCases {
		dir := t.TempDir()
		errorsRoot(t, dir)
		for name, body := range c.files {
			p := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(p), 0o777)
			if err := os.WriteFile(p, []byte(body), 0o666); err != nil {
				t.Fatal(err)
			}
		}
		got := inDir(t, dir, func() error { return run(context.Background(), c.args, &bytes.Buffer{}) })
		if got != c.want {
			t.Errorf("%s: xp %s\n got %q\nwant %q", c.input, strings.Join(c.args, " "), got, c.want)
		}
		fmt.Fprintf(&table, "| %s | `xp %s` | `%s` |\n", c.input, strings.Join(c.args, " "), strings.ReplaceAll(got, "|", `\|`))
	}
	const path = "../../docs/errors.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- errors -->\n", "<!-- /errors -->"
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %s … %s section", path, begin, end)
	}
	if string(doc[i+len(begin):j]) != table.String() {
		if os.Getenv("XP_UPDATE_DOCS") == "1" {
			os.WriteFile(path, []byte(string(doc[:i+len(begin)])+table.String()+string(doc[j:])), 0o666)
			return
		}
		t.Errorf("%s differs from the messages xp gives; run XP_UPDATE_DOCS=1 go test ./cmd/xp -run ErrorMessages", path)
	}
}

// inDir runs f in dir (xp's messages then name files relative to it) and
// returns its error's message.
func inDir(t *testing.T, dir string, f func() error) string {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	err := f()
	if err == nil {
		return "(no error)"
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return strings.ReplaceAll(msg, dir+string(filepath.Separator), "")
}
