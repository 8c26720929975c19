package models

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/torchrt"
)

// sameBag is a sentence-pair problem no single text can solve: label 1
// when the second text is a shuffle of the first, 0 when it is a fresh
// random text.
func sameBag(n int, seed uint64) Data {
	r := rand.New(rand.NewPCG(seed, 11))
	var d Data
	for i := 0; i < n; i++ {
		a := make([]int64, 3+r.IntN(6))
		for j := range a {
			a[j] = 1 + r.Int64N(30)
		}
		b := make([]int64, len(a))
		y := int64(r.IntN(2))
		if y == 1 {
			copy(b, a)
			r.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
		} else {
			for j := range b {
				b[j] = 1 + r.Int64N(30)
			}
		}
		d.Seqs, d.Seqs2, d.Labels = append(d.Seqs, a), append(d.Seqs2, b), append(d.Labels, y)
	}
	return d
}

func TestPairModelsLearn(t *testing.T) {
	train, valid := sameBag(3000, 1), sameBag(400, 2)
	for _, c := range []struct {
		name string
		new  func() (model, error)
	}{
		{"bilstm max", func() (model, error) {
			return NewBiLSTM(BiLSTMConfig{Vocab: 31, EmbedDim: 16, Hidden: 16, Layers: 1, Classes: 2, LR: 0.01, ClipNorm: 5, Pooling: "max", Pair: true, HeadHidden: 32}, gotch.CPU)
		}},
		{"baseline", func() (model, error) {
			return NewBaseline(BaselineConfig{Vocab: 31, EmbedDim: 16, Hidden: 32, Classes: 2, LR: 0.01, Pair: true}, gotch.CPU)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var res TrainResult
			err := torchrt.Do(func() error {
				torchrt.ManualSeed(2)
				m, err := c.new()
				if err != nil {
					return err
				}
				defer m.Close()
				res, err = Train(context.Background(), m, train, valid, TrainOptions{Epochs: 6, Batch: 32, Classes: 2, Seed: 1, Device: gotch.CPU, Dir: t.TempDir()})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("valid accuracy by epoch: %v", accuracies(res))
			if res.Valid.Accuracy < 0.9 {
				t.Errorf("valid accuracy %.3f on a same-bag pair problem", res.Valid.Accuracy)
			}
		})
	}
}

// model is a classifier the test must close.
type model interface {
	Classifier
	Close()
}

func accuracies(r TrainResult) []float64 {
	var out []float64
	for _, e := range r.Epochs {
		out = append(out, e.Valid.Accuracy)
	}
	return out
}

// TestPairModelRejectsSingleTexts: a pair model given single texts (and
// the other way round) fails with an error, not a shape panic.
func TestPairModelRejectsSingleTexts(t *testing.T) {
	train := sameBag(50, 3)
	single := Data{Seqs: train.Seqs, Labels: train.Labels}
	err := torchrt.Do(func() error {
		pair, err := NewBiLSTM(BiLSTMConfig{Vocab: 31, EmbedDim: 4, Hidden: 4, Layers: 1, Classes: 2, LR: 0.01, Pair: true}, gotch.CPU)
		if err != nil {
			return err
		}
		defer pair.Close()
		if _, err := Train(context.Background(), pair, single, single, TrainOptions{Epochs: 1, Batch: 8, Classes: 2, Dir: t.TempDir()}); err == nil {
			t.Error("pair model trained on single texts")
		}
		one, err := NewBaseline(BaselineConfig{Vocab: 31, EmbedDim: 4, Classes: 2, LR: 0.01}, gotch.CPU)
		if err != nil {
			return err
		}
		defer one.Close()
		if _, err := Train(context.Background(), one, train, train, TrainOptions{Epochs: 1, Batch: 8, Classes: 2, Dir: t.TempDir()}); err == nil {
			t.Error("single-text model trained on pairs")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
