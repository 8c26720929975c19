package models

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/torchrt"
)

// TestRealSST2Quality trains the biLSTM on SST-2 with the shared 300-d
// vectors (frozen) and reports dev accuracy; the bar is 0.80. It takes
// minutes, so it runs only with XP_LONG=1:
//
//	XP_LONG=1 XP_DATA=../shared/data go test ./models -run RealSST2 -v -timeout 60m
func TestRealSST2Quality(t *testing.T) {
	if os.Getenv("XP_LONG") != "1" {
		t.Skip("SKIP: long real-data training; set XP_LONG=1")
	}
	root := datasets.RootFromEnv()
	if root == "" {
		t.Skip("SKIP: XP_DATA not set")
	}
	ctx := context.Background()
	// Early stopping uses a validation split carved from train (10%,
	// seeded); dev is only evaluated, never selected on.
	d, err := datasets.Load(ctx, root, "sst2", datasets.Options{Carve: []datasets.Carving{{From: "train", To: "valid", Fraction: 0.1}}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	e, err := embedding.Load(ctx, filepath.Join(root, "embeddings/fasttext-sg-xpcorpus-300d.vec.gz"), embedding.Options{CacheDir: filepath.Join(os.TempDir(), "xp-emb-cache")})
	if err != nil {
		t.Fatal(err)
	}
	tok := datasets.DefaultTokenizer()
	counter := datasets.NewCounter()
	toks := map[string][][]string{}
	for _, split := range []string{"train", "valid", "dev"} {
		for _, x := range d.Splits[split] {
			w := tok.Tokens(x.Text)
			toks[split] = append(toks[split], w)
			if split == "train" {
				counter.Add(w...)
			}
		}
	}
	vocab := counter.Vocab(datasets.VocabOptions{Reserved: []string{"<pad>", "<unk>"}})
	ids := func(split string) Data {
		var out Data
		for i, ws := range toks[split] {
			s := make([]int64, len(ws))
			for j, w := range ws {
				if id, ok := vocab.ID(w); ok {
					s[j] = int64(id)
				} else {
					s[j] = 1
				}
			}
			out.Seqs = append(out.Seqs, s)
			out.Labels = append(out.Labels, int64(d.Splits[split][i].Label))
		}
		return out
	}
	train, valid, dev := ids("train"), ids("valid"), ids("dev")
	pre, missing, err := EmbeddingMatrix(vocab.Words, e, e.Dim, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("vocabulary %d words, %d without a vector", vocab.Len(), missing)
	epochs := 3
	if v, err := strconv.Atoi(os.Getenv("XP_EPOCHS")); err == nil {
		epochs = v
	}
	torchrt.SetThreads(0)
	var res TrainResult
	var devM Metrics
	err = torchrt.Do(func() error {
		torchrt.ManualSeed(1)
		m, err := NewBiLSTM(BiLSTMConfig{Vocab: int64(vocab.Len()), EmbedDim: int64(e.Dim), Hidden: 128, Layers: 1, Classes: 2,
			Dropout: 0.5, LR: 1e-3, ClipNorm: 5, Pretrained: pre, Freeze: true}, gotch.CPU)
		if err != nil {
			return err
		}
		defer m.Close()
		opt := TrainOptions{Epochs: epochs, Batch: 64, MaxLen: 64, Patience: 2, Classes: 2, Seed: 1, Device: gotch.CPU, Log: os.Stderr, Progress: os.Stderr}
		if res, err = Train(ctx, m, train, valid, opt); err != nil {
			return err
		}
		devM, err = Evaluate(m, dev, opt)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SST-2: best epoch %d (valid accuracy %.4f); dev accuracy %.4f, macro-F1 %.4f", res.BestEpoch, res.Valid.Accuracy, devM.Accuracy, devM.MacroF1)
	if devM.Accuracy < 0.80 {
		t.Errorf("SST-2 dev accuracy %.4f < 0.80", devM.Accuracy)
	}
}
