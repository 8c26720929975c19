package models

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/torchrt"
)

func TestBuckets(t *testing.T) {
	seqs := make([][]int64, 1003)
	for i := range seqs {
		seqs[i] = make([]int64, (i*37)%50)
	}
	a := Buckets(seqs, 10, 0, 1, 1)
	if !reflect.DeepEqual(a, Buckets(seqs, 10, 0, 1, 1)) || reflect.DeepEqual(a, Buckets(seqs, 10, 0, 1, 2)) {
		t.Error("buckets not a function of (seed, epoch)")
	}
	seen := make([]bool, len(seqs))
	spread := 0
	for _, b := range a {
		lo, hi := 1000, -1
		for _, i := range b {
			if seen[i] {
				t.Fatalf("example %d twice", i)
			}
			seen[i] = true
			lo, hi = min(lo, len(seqs[i])), max(hi, len(seqs[i]))
		}
		spread += hi - lo
	}
	if slices.Contains(seen, false) {
		t.Error("an example was left out")
	}
	if avg := float64(spread) / float64(len(a)); avg > 5 {
		t.Errorf("batches mix lengths: mean spread %.1f tokens", avg)
	}
}

func smokeData(t *testing.T) (Data, Data) {
	c := DefaultSmoke()
	c.Examples = 600
	tokens, labels := separable(c)
	return Data{Seqs: tokens[:500], Labels: labels[:500]}, Data{Seqs: tokens[500:], Labels: labels[500:]}
}

func trainOnce(t *testing.T, epochs, patience int) (TrainResult, metrics.Classification) {
	train, valid := smokeData(t)
	var res TrainResult
	var after metrics.Classification
	err := torchrt.Do(func() error {
		torchrt.ManualSeed(7)
		m, err := NewBiLSTM(BiLSTMConfig{Vocab: 20, EmbedDim: 16, Hidden: 16, Layers: 1, Classes: 2, LR: 0.01, ClipNorm: 5}, gotch.CPU)
		if err != nil {
			return err
		}
		defer m.Close()
		opt := TrainOptions{Epochs: epochs, Batch: 32, Patience: patience, Classes: 2, Seed: 3, Device: gotch.CPU, Dir: t.TempDir()}
		if res, err = Train(context.Background(), m, train, valid, opt); err != nil {
			return err
		}
		after, err = Evaluate(m, valid, opt)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, after
}

// TestLaggedLoss: reading each step's loss a step late (as Train does on
// a GPU, forced here on the CPU) trains to the same bits — epoch losses,
// validation scores, the best epoch — and still stops at a NaN loss.
// Embeddings of NaN make the first loss NaN on every CPU (a learning
// rate of 1e30 did on some only: on others the loss stayed finite, near
// 1e29, and the test failed there).
func TestLaggedLoss(t *testing.T) {
	train, valid := smokeData(t)
	run := func(lag bool, nan bool) (TrainResult, error) {
		var res TrainResult
		err := torchrt.Do(func() error {
			torchrt.ManualSeed(7)
			cfg := BiLSTMConfig{Vocab: 20, EmbedDim: 16, Hidden: 16, Layers: 1, Classes: 2, LR: 0.01}
			if nan { // embeddings of NaN: the first step's loss is NaN
				cfg.Pretrained = make([]float32, cfg.Vocab*cfg.EmbedDim)
				for i := range cfg.Pretrained {
					cfg.Pretrained[i] = float32(math.NaN())
				}
			}
			m, err := NewBiLSTM(cfg, gotch.CPU)
			if err != nil {
				return err
			}
			defer m.Close()
			res, err = Train(context.Background(), m, train, valid, TrainOptions{Epochs: 3, Batch: 32, Classes: 2, Seed: 3, Device: gotch.CPU, Dir: t.TempDir(), lagLoss: lag})
			return err
		})
		return res, err
	}
	now, err := run(false, false)
	if err != nil {
		t.Fatal(err)
	}
	late, err := run(true, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range now.Epochs { // the one field that is the clock's
		now.Epochs[i].ExamplesPerSec, late.Epochs[i].ExamplesPerSec = 0, 0
	}
	if !reflect.DeepEqual(now, late) {
		t.Errorf("losses read at once: %+v\nread a step late: %+v", now, late)
	}
	for _, lag := range []bool{false, true} {
		if _, err := run(lag, true); err == nil || !strings.Contains(err.Error(), "loss is NaN") {
			t.Errorf("lag %v, NaN embeddings: %v, want the NaN loss", lag, err)
		}
	}
}

func TestTrainLearnsAndIsReproducible(t *testing.T) {
	a, afterA := trainOnce(t, 4, 0)
	b, _ := trainOnce(t, 4, 0)
	if !reflect.DeepEqual(a.Epochs[0].Loss, b.Epochs[0].Loss) || a.Epochs[3].Loss != b.Epochs[3].Loss || !reflect.DeepEqual(a.Valid, b.Valid) {
		t.Errorf("same seeds, different training: %+v vs %+v", a.Epochs, b.Epochs)
	}
	if a.Valid.Accuracy < 0.9 {
		t.Errorf("valid accuracy %.3f after 4 epochs on a separable problem", a.Valid.Accuracy)
	}
	// The model holds the best epoch's weights. Scoring keeps each
	// example's right or wrong; the epochs' validation scores do not (only
	// the evaluated split's are kept, in the record).
	if len(afterA.Correct) != afterA.N || a.Valid.Correct != "" {
		t.Errorf("per-example results: %d for %d examples after Train, %q in the epoch's score", len(afterA.Correct), afterA.N, a.Valid.Correct)
	}
	afterA.Correct = ""
	if !reflect.DeepEqual(afterA, a.Valid) {
		t.Errorf("model after Train scores %+v, best epoch %d scored %+v", afterA, a.BestEpoch, a.Valid)
	}
}

func TestTrainBadOptions(t *testing.T) {
	train, valid := smokeData(t)
	if _, err := Train(context.Background(), nil, train, valid, TrainOptions{Epochs: 0, Batch: 1, Classes: 2}); err == nil {
		t.Error("0 epochs accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := torchrt.Do(func() error {
		m, err := NewBiLSTM(BiLSTMConfig{Vocab: 20, EmbedDim: 4, Hidden: 4, Layers: 1, Classes: 2, LR: 0.01}, gotch.CPU)
		if err != nil {
			return err
		}
		defer m.Close()
		_, err = Train(ctx, m, train, valid, TrainOptions{Epochs: 1, Batch: 8, Classes: 2})
		return err
	})
	if err != context.Canceled {
		t.Errorf("cancelled training returned %v", err)
	}
}

// TestReadLossNotFinite: a loss that is NaN or infinite ends the training
// (an infinite one was read as a number and trained on).
func TestReadLossNotFinite(t *testing.T) {
	err := torchrt.Do(func() error {
		for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0.5} {
			x, err := ts.NewTensorFromData([]float64{v}, []int64{1})
			if err != nil {
				return err
			}
			_, err = readLoss(x.Squeeze(true))
			if finite := !math.IsNaN(v) && !math.IsInf(v, 0); finite != (err == nil) {
				t.Errorf("loss %v: %v", v, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
