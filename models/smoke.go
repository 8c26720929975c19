package models

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/torchrt"
)

// SmokeConfig is a tiny, separable classification problem that a working
// binding learns in a few dozen steps: the class of a sequence is whether
// its first token is in the lower half of the vocabulary, so the model must
// carry information across the whole sequence.
type SmokeConfig struct {
	Examples, Length, Vocab int
	Steps, Batch            int
	Seed                    uint64
	Device                  gotch.Device
}

// DefaultSmoke is the problem the tests and `xp smoke` train on.
func DefaultSmoke() SmokeConfig {
	return SmokeConfig{Examples: 256, Length: 8, Vocab: 20, Steps: 60, Batch: 32, Seed: 1, Device: gotch.CPU}
}

// SmokeResult holds the per-step losses and the final training accuracy.
type SmokeResult struct {
	Losses   []float64
	Accuracy float64
}

// separable draws the problem's data from a PCG stream seeded by seed.
func separable(c SmokeConfig) (tokens [][]int64, labels []int64) {
	r := rand.New(rand.NewPCG(c.Seed, 0x5eed))
	for i := 0; i < c.Examples; i++ {
		// Lengths vary (1 … Length) so that packing is exercised.
		seq := make([]int64, 1+r.IntN(c.Length))
		for j := range seq {
			seq[j] = 1 + r.Int64N(int64(c.Vocab-1)) // 0 is padding
		}
		tokens = append(tokens, seq)
		if seq[0] <= int64(c.Vocab/2) {
			labels = append(labels, 1)
		} else {
			labels = append(labels, 0)
		}
	}
	return tokens, labels
}

// TrainSmoke trains a small BiLSTM on the smoke problem with every seed
// fixed (libtorch's generator, the data, the batch order) and reports each
// step's loss. Two calls with the same config return identical losses on
// the CPU.
func TrainSmoke(ctx context.Context, c SmokeConfig) (SmokeResult, error) {
	var res SmokeResult
	if c.Examples < c.Batch || c.Batch < 1 || c.Vocab < 4 || c.Length < 1 {
		return res, fmt.Errorf("smoke: bad config %+v", c)
	}
	err := torchrt.Do(func() error {
		torchrt.ManualSeed(int64(c.Seed))
		m, err := NewBiLSTM(BiLSTMConfig{Vocab: int64(c.Vocab), EmbedDim: 16, Hidden: 16, Layers: 1, Classes: 2, LR: 0.01, ClipNorm: 5}, c.Device)
		if err != nil {
			return err
		}
		defer m.Close()
		tokens, labels := separable(c)
		order := rand.New(rand.NewPCG(c.Seed, 0xba7c4))
		perm := order.Perm(len(tokens))
		pos := 0
		for step := 0; step < c.Steps; step++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if pos+c.Batch > len(perm) {
				perm, pos = order.Perm(len(tokens)), 0
			}
			b, err := NewBatch(tokens, labels, perm[pos:pos+c.Batch], 0, 0, c.Device)
			if err != nil {
				return err
			}
			pos += c.Batch
			loss, err := m.Step(b)
			b.Drop()
			if err != nil {
				return fmt.Errorf("smoke step %d: %w", step, err)
			}
			res.Losses = append(res.Losses, loss)
		}
		all := make([]int, len(tokens))
		for i := range all {
			all[i] = i
		}
		b, err := NewBatch(tokens, nil, all, 0, 0, c.Device)
		if err != nil {
			return err
		}
		defer b.Drop()
		pred, err := m.Predict(b)
		if err != nil {
			return err
		}
		right := 0
		for i, p := range pred {
			if p == labels[i] {
				right++
			}
		}
		res.Accuracy = float64(right) / float64(len(pred))
		return nil
	})
	return res, err
}
