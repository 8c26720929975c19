package models

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/torchrt"
)

// bagOfWords: label 1 when token 3 occurs; lengths 1 … 12.
func bagOfWords(n int, seed uint64) Data {
	r := rand.New(rand.NewPCG(seed, 1))
	var d Data
	for i := 0; i < n; i++ {
		s := make([]int64, 1+r.IntN(12))
		y := int64(0)
		for j := range s {
			s[j] = 1 + r.Int64N(15)
			if s[j] == 3 {
				y = 1
			}
		}
		d.Seqs, d.Labels = append(d.Seqs, s), append(d.Labels, y)
	}
	return d
}

func TestBaselineLearns(t *testing.T) {
	train, valid := bagOfWords(2000, 1), bagOfWords(300, 2)
	for _, hidden := range []int64{0, 16} {
		var res TrainResult
		err := torchrt.Do(func() error {
			torchrt.ManualSeed(5)
			m, err := NewBaseline(BaselineConfig{Vocab: 16, EmbedDim: 8, Classes: 2, Hidden: hidden, LR: 0.05}, gotch.CPU)
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
		if res.Valid.Accuracy < 0.9 {
			t.Errorf("hidden %d: valid accuracy %.3f on a bag-of-words problem", hidden, res.Valid.Accuracy)
		}
	}
	if _, err := NewBaseline(BaselineConfig{Vocab: 4, EmbedDim: 2, Classes: 1, LR: 1}, gotch.CPU); err == nil {
		t.Error("one class accepted")
	}
}
