package models

import (
	"context"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/torchrt"
)

func residentBytes(t *testing.T) int64 {
	n, err := torchrt.ResidentBytes()
	if err != nil {
		t.Skipf("SKIP: %v", err)
	}
	return n
}

// TestTrainingMemoryFlat trains on SST-2-sized data (67,349 sentences of
// 1–30 tokens; a small model keeps it fast) for four epochs and requires
// resident memory after the last epoch to stay within 16 MiB of epoch 2
// (epoch 1 still grows allocator pools). A leak of one tensor per step
// (1,053 steps per epoch, each ≥ 100 KB with gotch's Go-side allocation)
// would exceed it by far.
func TestTrainingMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: -short")
	}
	r := rand.New(rand.NewPCG(1, 2))
	var train Data
	for i := 0; i < 67349; i++ {
		s := make([]int64, 1+r.IntN(30))
		for j := range s {
			s[j] = 1 + r.Int64N(999)
		}
		train.Seqs, train.Labels = append(train.Seqs, s), append(train.Labels, s[0]%2)
	}
	valid := Data{Seqs: train.Seqs[:500], Labels: train.Labels[:500]}
	var rss []int64
	var live []int
	before := torchrt.LiveTensors()
	err := torchrt.Do(func() error {
		torchrt.ManualSeed(1)
		m, err := NewBiLSTM(BiLSTMConfig{Vocab: 1000, EmbedDim: 8, Hidden: 8, Layers: 1, Classes: 2, LR: 0.01, ClipNorm: 5}, gotch.CPU)
		if err != nil {
			return err
		}
		defer m.Close()
		_, err = Train(context.Background(), m, train, valid, TrainOptions{Epochs: 4, Batch: 64, Classes: 2, Seed: 1, Device: gotch.CPU, Dir: t.TempDir(),
			OnEpoch: func(EpochStats) {
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
	t.Logf("resident MiB after each epoch: %v; live tensors %v (%d before the model, %d after Close)", mib(rss), live, before, torchrt.LiveTensors())
	if live[3] != live[0] {
		t.Errorf("live tensors after each epoch %v: the count grows", live)
	}
	if after := torchrt.LiveTensors(); after != before {
		t.Errorf("%d live tensors before the model, %d after training and Close", before, after)
	}
	if grow := rss[3] - rss[1]; grow > 16<<20 {
		t.Errorf("resident memory grew %d MiB from epoch 2 to 4: %v MiB", grow>>20, mib(rss))
	}
}

func mib(b []int64) []int64 {
	out := make([]int64, len(b))
	for i, x := range b {
		out[i] = x >> 20
	}
	return out
}
