package models

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/torchrt"
)

func residentBytes(t *testing.T) int64 {
	n, err := torchrt.ResidentBytes()
	if err != nil {
		t.Skipf("SKIP: %v", err)
	}
	return n
}

// settledLiveTensors counts live tensors once garbage collection has run
// the finalizers of tensors that earlier tests left to it: the count is
// read until it stops changing. Counting without this made the test
// depend on what ran before it.
func settledLiveTensors() int {
	prev := -1
	for i := 0; i < 100; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond) // finalizers run on their own goroutine
		n := torchrt.LiveTensors()
		if n == prev {
			return n
		}
		prev = n
	}
	return prev
}

// leakBound is how much resident memory may grow from epoch 2 to the last
// epoch. Allocator pools and load (other processes, page cache pressure)
// move resident memory by a few MiB; the smallest leak the test is for —
// one tensor per step, ≥ 100 KB each with gotch's Go-side allocation,
// 1,053 steps per epoch of SST-2-sized data — adds ≥ 200 MiB over two
// epochs.
const leakBound = 64 << 20

// memoryProblems judges the measurements taken after each epoch.
func memoryProblems(rss []int64, live []int) []string {
	var p []string
	if live[len(live)-1] != live[0] {
		p = append(p, fmt.Sprintf("live tensors after each epoch %v: the count grows", live))
	}
	if grow := rss[len(rss)-1] - rss[1]; grow > leakBound {
		p = append(p, fmt.Sprintf("resident memory grew %d MiB from epoch 2 to %d: %v MiB", grow>>20, len(rss), mib(rss)))
	}
	return p
}

// leaky wraps a model and leaks one tensor of leakBytes per step.
type leaky struct {
	Model
	kept []*ts.Tensor
}

const leakBytes = 1 << 20

func (l *leaky) Step(b *Batch) (float64, error) {
	x, err := ts.Ones([]int64{leakBytes / 4}, gotch.Float, gotch.CPU)
	if err != nil {
		return 0, err
	}
	l.kept = append(l.kept, x)
	return l.Model.Step(b)
}

// trainMeasured trains a small BiLSTM on n synthetic SST-2-like sentences
// for four epochs and measures resident memory and live tensors after
// each epoch; wrap may replace the model.
func trainMeasured(t *testing.T, n int, wrap func(Model) Model) (rss []int64, live []int, before, after int) {
	r := rand.New(rand.NewPCG(1, 2))
	var train Data
	for i := 0; i < n; i++ {
		s := make([]int64, 1+r.IntN(30))
		for j := range s {
			s[j] = 1 + r.Int64N(999)
		}
		train.Seqs, train.Labels = append(train.Seqs, s), append(train.Labels, s[0]%2)
	}
	valid := Data{Seqs: train.Seqs[:500], Labels: train.Labels[:500]}
	before = settledLiveTensors()
	err := torchrt.Do(func() error {
		torchrt.ManualSeed(1)
		m, err := NewBiLSTM(BiLSTMConfig{Vocab: 1000, EmbedDim: 8, Hidden: 8, Layers: 1, Classes: 2, LR: 0.01, ClipNorm: 5}, gotch.CPU)
		if err != nil {
			return err
		}
		defer m.Close()
		var model Model = m
		if wrap != nil {
			model = wrap(m)
		}
		_, err = Train(context.Background(), model, train, valid, TrainOptions{Epochs: 4, Batch: 64, Classes: 2, Seed: 1, Device: gotch.CPU, Dir: t.TempDir(),
			OnEpoch: func(metrics.Epoch) {
				runtime.GC()
				debug.FreeOSMemory()
				rss = append(rss, residentBytes(t))
				live = append(live, torchrt.LiveTensors())
			}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rss, live, before, settledLiveTensors()
}

// TestTrainingMemoryFlat trains on SST-2-sized data (67,349 sentences of
// 1–30 tokens; a small model keeps it fast) for four epochs and requires
// the number of live tensors to stay constant across epochs and return to
// its level before the model after Close, and resident memory not to grow
// by a leak's worth (leakBound) from epoch 2 on (epoch 1 still grows
// allocator pools).
func TestTrainingMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: -short")
	}
	rss, live, before, after := trainMeasured(t, 67349, nil)
	t.Logf("resident MiB after each epoch: %v; live tensors %v (%d before the model, %d after Close)", mib(rss), live, before, after)
	for _, p := range memoryProblems(rss, live) {
		t.Error(p)
	}
	if after != before {
		t.Errorf("%d live tensors before the model, %d after training and Close", before, after)
	}
}

// TestMemoryCheckCatchesLeak: the same judgement flags a leak of one
// 1 MiB tensor per step (100 steps per epoch): the memory test can fail.
func TestMemoryCheckCatchesLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: -short")
	}
	var l *leaky
	rss, live, _, _ := trainMeasured(t, 6400, func(m Model) Model { l = &leaky{Model: m}; return l })
	defer func() {
		for _, x := range l.kept {
			x.Drop()
		}
	}()
	problems := memoryProblems(rss, live)
	t.Logf("with the leak: resident MiB %v, live tensors %v: %q", mib(rss), live, problems)
	if len(problems) != 2 {
		t.Errorf("a leak of %d MiB per epoch was not flagged twice (live count and resident memory): %q", 100*leakBytes>>20, problems)
	}
}

func mib(b []int64) []int64 {
	out := make([]int64, len(b))
	for i, x := range b {
		out[i] = x >> 20
	}
	return out
}

// TestStepFreesTensors: a training step and a prediction free every
// tensor they make before returning, for each encoder and pooling: none
// is left to Go's finalizers, which run only when Go's heap grows and
// never see device memory. (The tensors of each step were left to the
// finalizers until scope.drop got a pointer receiver.)
func TestStepFreesTensors(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no finalizer may free a leaked tensor meanwhile
	seqs := [][]int64{{1, 2, 3}, {4, 5}, {6, 7, 8, 9}, {3}}
	labels := []int64{0, 1, 0, 1}
	for _, c := range []struct {
		name  string
		build func() (Model, error)
		pair  bool
	}{
		{"bilstm last", func() (Model, error) {
			return NewBiLSTM(BiLSTMConfig{Vocab: 10, EmbedDim: 4, Hidden: 4, Layers: 2, Classes: 2, LR: 0.01, ClipNorm: 5, Dropout: 0.2}, gotch.CPU)
		}, false},
		{"bilstm max pair", func() (Model, error) {
			return NewBiLSTM(BiLSTMConfig{Vocab: 10, EmbedDim: 4, Hidden: 4, Layers: 1, Classes: 2, LR: 0.01, Pooling: "max", Pair: true, HeadHidden: 3}, gotch.CPU)
		}, true},
		{"baseline", func() (Model, error) {
			return NewBaseline(BaselineConfig{Vocab: 10, EmbedDim: 4, Classes: 2, LR: 0.01, Hidden: 3, Dropout: 0.1}, gotch.CPU)
		}, false},
	} {
		err := torchrt.Do(func() error {
			torchrt.ManualSeed(1)
			m, err := c.build()
			if err != nil {
				return err
			}
			defer m.Close()
			for i := 0; i < 2; i++ {
				var b *Batch
				if c.pair {
					b, err = NewPairBatch(seqs, seqs, labels, []int{0, 1, 2, 3}, 0, 0, gotch.CPU)
				} else {
					b, err = NewBatch(seqs, labels, []int{0, 1, 2, 3}, 0, 0, gotch.CPU)
				}
				if err != nil {
					return err
				}
				before := torchrt.LiveTensors()
				if _, err := m.Step(b); err != nil {
					return err
				}
				afterStep := torchrt.LiveTensors()
				if _, err := m.Predict(b); err != nil {
					return err
				}
				if after := torchrt.LiveTensors(); afterStep != before || after != before {
					t.Errorf("%s: %d live tensors before a step, %d after it, %d after a prediction", c.name, before, afterStep, after)
				}
				b.Drop()
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
}
