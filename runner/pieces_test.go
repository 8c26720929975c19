package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/internal/hftest"
	"github.com/xp-nlp/xp/results"
)

// TestTransformerRuns: a config whose model is a transformer checkpoint
// (a tiny BERT written here, its vocabulary the fixture's word pieces,
// and a tiny RoBERTa with its byte-level BPE) runs end to end —
// privatized words tokenized by the checkpoint's tokenizer, fine-tuned,
// evaluated — records the checkpoint's checksum in its inputs (so
// another checkpoint is another model), learns the task well above
// chance, and a second run takes every cell from the records.
func TestTransformerRuns(t *testing.T) {
	vocab := append([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad"}, strings.Fields("##0 ##1 ##2 ##3 ##4 ##5 ##6 ##7 ##8 ##9")...)
	for _, tc := range []struct {
		name string
		ck   hftest.Bert
	}{
		{"bert", hftest.Bert{Vocab: vocab, Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPositions: 32, Seed: 2}},
		{"roberta", hftest.Bert{RoBERTa: true, Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPositions: 34, Seed: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) { transformerRuns(t, tc.ck) })
	}
}

func transformerRuns(t *testing.T, spec hftest.Bert) {
	dir := t.TempDir()
	if _, err := fixture.Write(dir, fixture.Options{Train: 150, Test: 40, Epochs: 1, Epsilon: []float64{3}, Seeds: []int{1}}); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "tiny-bert")
	if err := os.Mkdir(ck, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := spec.Write(ck); err != nil {
		t.Fatal(err)
	}
	path, out, err := fixture.Config(dir, "tf", fmt.Sprintf(`mechanisms:
  - name: laplace
    epsilon: [3]
apply: [none, test]
model:
  kind: transformer
  checkpoint: %s
  lr: 0.01
  warmup: 0.1
train:
  epochs: 10
  batch: 16
  max_len: 32
seeds: [1]
`, ck))
	if err != nil {
		t.Fatal(err)
	}
	c, err := experiments.Load(path, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Ran != 2 || sum.Failed != 0 {
		t.Fatalf("ran %d, failed %d", sum.Ran, sum.Failed)
	}
	store, err := results.OpenStore(out)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := store.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Provenance.Inputs.Checkpoint == "" {
			t.Errorf("%s: no checkpoint checksum in its inputs", r.Cell)
		}
		// 80 test texts: 0.7 is 3.6 standard deviations above chance.
		if r.Cell.Mode == "none" && r.Test.Accuracy < 0.7 {
			t.Errorf("baseline accuracy %.3f, chance 0.5 (training %+v)", r.Test.Accuracy, r.Epochs)
		}
	}
	again, err := Run(context.Background(), c, Options{})
	if err != nil || again.Ran != 0 {
		t.Errorf("second run: ran %d (%v), want every cell from the records", again.Ran, err)
	}
}

// TestTransformerPairs: a sentence-pair table reaches a transformer as
// [CLS] a [SEP] b [SEP] with token types, trains and is evaluated.
func TestTransformerPairs(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "tiny-bert")
	if err := os.Mkdir(ck, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := (hftest.Bert{Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPositions: 32, Seed: 2}).Write(ck); err != nil {
		t.Fatal(err)
	}
	// The label says whether the second text repeats the first's word.
	var train, test strings.Builder
	words := []string{"good", "bad", "great", "awful"}
	for i, b := range []*strings.Builder{&train, &test} {
		b.WriteString("a\tb\tlabel\n")
		for k := 0; k < []int{80, 20}[i]; k++ {
			w, v := words[k%4], words[(k/4+k)%4]
			fmt.Fprintf(b, "%s film was %s\ta %s movie\t%v\n", []string{"the", "this"}[i], w, v, w == v) // test texts differ from training texts
		}
	}
	for name, body := range map[string]string{"train.tsv": train.String(), "test.tsv": test.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "pairs.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(`name: pairs
data: %s
dataset: {name: table, path: ./train.tsv, test_path: ./test.tsv, text: a, text2: b}
embedding: {path: vectors.txt}
mechanisms: []
apply: [none]
model: {kind: transformer, checkpoint: %s, lr: 0.01}
train: {epochs: 2, batch: 16, max_len: 32}
seeds: [1]
threads: 1
output: %s
cache: %s
`, dir, ck, filepath.Join(dir, "out"), filepath.Join(dir, "cache"))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vectors.txt"), []byte("the 0.1 0.2\nfilm 0.2 0.1\ngood 0.9 0.1\nbad -0.9 0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := experiments.Load(path, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), c, Options{})
	if err != nil || sum.Ran != 1 || sum.Failed != 0 {
		t.Fatalf("ran %d, failed %d: %v", sum.Ran, sum.Failed, err)
	}
	store, err := results.OpenStore(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := store.All()
	if err != nil || len(recs) != 1 || recs[0].Test.N != 20 {
		t.Fatalf("records %+v: %v", recs, err)
	}
}

// TestEstimatePricesFineTuning: a dry run of a transformer config, on a
// host that never fine-tuned it, measures the fine-tuning speed on a
// sample of the training split (its own tokenizer's pieces, the split's
// lengths), prices the models to train with it, and writes nothing: no
// record, no model, no rate.
func TestEstimatePricesFineTuning(t *testing.T) {
	dir := t.TempDir()
	if _, err := fixture.Write(dir, fixture.Options{Train: 60, Test: 20, Epochs: 1, Epsilon: []float64{3}, Seeds: []int{1}}); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "tiny-roberta")
	if err := os.Mkdir(ck, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := (hftest.Bert{RoBERTa: true, Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPositions: 34, Seed: 2}).Write(ck); err != nil {
		t.Fatal(err)
	}
	path, out, err := fixture.Config(dir, "tfe", fmt.Sprintf("mechanisms:\n  - name: laplace\n    epsilon: [3]\napply: [none, train]\nmodel: {kind: transformer, checkpoint: %s}\ntrain: {epochs: 2, batch: 8, max_len: 32}\nseeds: [1]\n", ck))
	if err != nil {
		t.Fatal(err)
	}
	c, err := experiments.Load(path, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), c, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	e := sum.Estimate
	trained := slices.ContainsFunc(e.Calibrated, func(s string) bool {
		return strings.HasPrefix(s, "train ") && strings.Contains(s, `"kind":"transformer"`)
	})
	if e.Trainings != 2 || !trained || e.unknown("train ") || e.Seconds <= 0 {
		t.Errorf("estimate: %d trainings, calibrated %q, unknown %q, %v s; want 2 fine-tunings priced from a sample", e.Trainings, e.Calibrated, e.Unknown, e.Seconds)
	}
	for _, p := range []string{out, filepath.Join(c.Cache, modelsDir), filepath.Join(c.Cache, ratesFile)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the dry run wrote %s", p)
		}
	}
}

// TestMaxLenBeyondCheckpoint: a train.max_len longer than the
// checkpoint's positions hold is refused at its line, swept or not.
// Before, texts were cut at the checkpoint's length without a word, and
// the cells were keyed by a length they never had (max_len 64 and 32 the
// same model under two keys).
func TestMaxLenBeyondCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if _, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 10, Epochs: 1, Epsilon: []float64{3}, Seeds: []int{1}}); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "tiny-bert")
	if err := os.Mkdir(ck, 0o755); err != nil {
		t.Fatal(err)
	}
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad"}
	if _, err := (hftest.Bert{Vocab: vocab, Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPositions: 32, Seed: 2}).Write(ck); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ maxLen, wantErr string }{
		{"32", ""},
		{"33", "train.max_len = 33"},
		{"[16, 64]", "train.max_len = 64"},
	} {
		path, _, err := fixture.Config(dir, "ml", fmt.Sprintf("mechanisms:\n  - name: laplace\n    epsilon: [3]\napply: [none, train]\nmodel: {kind: transformer, checkpoint: %s}\ntrain:\n  epochs: 1\n  max_len: %s\nseeds: [1]\n", ck, tc.maxLen))
		if err != nil {
			t.Fatal(err)
		}
		c, err := experiments.Load(path, experiments.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(context.Background(), c, Options{DryRun: true})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("max_len %s: %v", tc.maxLen, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "ml.yaml:") || !strings.Contains(err.Error(), "32")):
			t.Errorf("max_len %s: %v; want an error at the config's line saying %q and the checkpoint's 32", tc.maxLen, err, tc.wantErr)
		}
	}
}
