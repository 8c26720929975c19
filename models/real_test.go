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
// vectors (frozen) and reports dev accuracy; the bar is 0.80. The real
// quality tests take minutes, so they run only with XP_LONG=1:
//
//	XP_LONG=1 XP_DATA=../shared/data go test ./models -run 'Real.*Quality' -v -timeout 60m
func TestRealSST2Quality(t *testing.T) {
	realQuality(t, "sst2", "dev", nil, 0.80)
}

// TestRealTwitterQuality: Disaster Tweets, 9:1 train/test as the paper
// splits, validation carved from train; the bar is 0.77 on the held-out 10%.
func TestRealTwitterQuality(t *testing.T) {
	realQuality(t, "twitter", "test", []datasets.Carving{{From: "train", To: "test", Fraction: 0.1}}, 0.77)
}

func realQuality(t *testing.T, name, evalSplit string, carve []datasets.Carving, bar float64) {
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
	carve = append(carve, datasets.Carving{From: "train", To: "valid", Fraction: 0.1})
	d, err := datasets.Load(ctx, root, name, datasets.Options{Carve: carve, Seed: 1})
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
	for _, split := range []string{"train", "valid", evalSplit} {
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
	train, valid, dev := ids("train"), ids("valid"), ids(evalSplit)
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
	t.Logf("%s: best epoch %d (valid accuracy %.4f); %s accuracy %.4f, macro-F1 %.4f", name, res.BestEpoch, res.Valid.Accuracy, evalSplit, devM.Accuracy, devM.MacroF1)
	if devM.Accuracy < bar {
		t.Errorf("%s %s accuracy %.4f < %v", name, evalSplit, devM.Accuracy, bar)
	}
}
