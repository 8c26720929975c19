package models

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/torchrt"
)

// TestTaggerLearnsContext: each token's tag is the token before it (0
// at the start), which no per-token classifier can know; the tagger
// learns it from the forward direction. Predictions come back per
// sequence in the order asked, one per kept token.
func TestTaggerLearnsContext(t *testing.T) {
	seqs, tags := contextTask()
	err := torchrt.Do(func() error {
		torchrt.ManualSeed(3)
		m, err := NewTagger(BiLSTMConfig{Vocab: 9, EmbedDim: 8, Hidden: 24, Layers: 1, Classes: 9, LR: 0.02, ClipNorm: 5}, gotch.CPU)
		if err != nil {
			return err
		}
		defer m.Close()
		for epoch := range 25 {
			for lo := 0; lo < 300; lo += 30 {
				idx := make([]int, 30)
				for i := range idx {
					idx[i] = lo + (i*7+epoch)%30
				}
				b, err := NewTagBatch(seqs, tags, idx, 0, 0, gotch.CPU)
				if err != nil {
					return err
				}
				_, err = m.Step(b)
				b.Drop()
				if err != nil {
					return err
				}
			}
		}
		idx := make([]int, 100)
		for i := range idx {
			idx[i] = 399 - i
		}
		b, err := NewTagBatch(seqs, nil, idx, 0, 8, gotch.CPU)
		if err != nil {
			return err
		}
		defer b.Drop()
		pred, err := m.Predict(b)
		if err != nil {
			return err
		}
		right, all := 0, 0
		for k, i := range idx {
			if want := min(len(seqs[i]), 8); len(pred[k]) != want {
				t.Fatalf("sequence %d: %d tags for %d kept tokens", i, len(pred[k]), want)
			}
			for j, p := range pred[k] {
				all++
				if p == tags[i][j] {
					right++
				}
			}
		}
		if acc := float64(right) / float64(all); acc < 0.95 {
			t.Errorf("held-out tag accuracy %.3f, want ≥ 0.95", acc)
		}
		if _, err := NewTagBatch(seqs, [][]int64{{1}}, []int{0}, 0, 0, gotch.CPU); err == nil {
			t.Error("tags of the wrong length accepted")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTrainTagger: TrainTagger and PredictTags learn the same context
// task through the shared loop (a seeded shuffle each epoch), give the
// same tags when run again from the same seeds, and refuse options that
// would train nothing.
func TestTrainTagger(t *testing.T) {
	seqs, tags := contextTask()
	opt := TagOptions{Epochs: 25, Batch: 30, Seed: 1, Stream: 2, Device: gotch.CPU}
	train := func() [][]int64 {
		t.Helper()
		var pred [][]int64
		err := torchrt.Do(func() error {
			torchrt.ManualSeed(3)
			m, err := NewTagger(BiLSTMConfig{Vocab: 9, EmbedDim: 8, Hidden: 24, Layers: 1, Classes: 9, LR: 0.02, ClipNorm: 5}, gotch.CPU)
			if err != nil {
				return err
			}
			defer m.Close()
			if err := TrainTagger(context.Background(), m, seqs[:300], tags[:300], opt); err != nil {
				return err
			}
			pred, err = PredictTags(m, seqs[300:], gotch.CPU)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return pred
	}
	pred := train()
	right, all := 0, 0
	for k, p := range pred {
		want := tags[300+k]
		if len(p) != len(want) {
			t.Fatalf("sequence %d: %d tags for %d tokens", 300+k, len(p), len(want))
		}
		for j := range p {
			all++
			if p[j] == want[j] {
				right++
			}
		}
	}
	if acc := float64(right) / float64(all); acc < 0.95 {
		t.Errorf("held-out tag accuracy %.3f, want ≥ 0.95", acc)
	}
	if again := train(); !reflect.DeepEqual(again, pred) {
		t.Error("the same seeds gave other tags")
	}
	if err := TrainTagger(context.Background(), nil, seqs, tags, TagOptions{Batch: 30}); err == nil {
		t.Error("zero epochs accepted")
	}
}

// contextTask is 400 sequences of 3–12 tokens from 1–8 whose tags are
// each token's predecessor (0 for the first): learnable only from
// context.
func contextTask() (seqs, tags [][]int64) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 400 {
		n := 3 + r.IntN(10)
		s, tg := make([]int64, n), make([]int64, n)
		for i := range s {
			s[i] = 1 + r.Int64N(8)
			if i > 0 {
				tg[i] = s[i-1]
			}
		}
		seqs, tags = append(seqs, s), append(tags, tg)
	}
	return seqs, tags
}
