package models

import (
	"math"
	"slices"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/torchrt"
)

func TestNewBatchOrder(t *testing.T) {
	seqs := [][]int64{{1}, {2, 3, 4}, {}, {5, 6}}
	b, err := NewBatch(seqs, []int64{0, 1, 0, 1}, []int{0, 1, 2, 3}, 0, 2, gotch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Drop()
	// maxLen 2 cuts {2,3,4}; the empty sequence becomes one pad token.
	if !slices.Equal(b.Lengths, []int64{2, 2, 1, 1}) || !slices.Equal(b.Order, []int{1, 3, 0, 2}) {
		t.Errorf("lengths %v order %v", b.Lengths, b.Order)
	}
	got := make([]int64, 8)
	b.Tokens.CopyData(got, 8)
	if want := []int64{2, 3, 5, 6, 1, 0, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("tokens %v, want %v", got, want)
	}
}

// TestPaddingInvariance: every example's scores are the same alone and
// batched with others of other lengths, for both poolings and for sentence
// pairs (whose two texts sort differently within the batch, so a wrong
// alignment of the second texts changes the scores). Without packing the
// backward LSTM would read the padding first; without −∞ padding max
// pooling would see it.
func TestPaddingInvariance(t *testing.T) {
	first := [][]int64{{1, 2, 3}, {4, 5, 6, 7, 8, 9, 1, 2}, {7}, {3, 3, 5, 9}}
	second := [][]int64{{6, 1}, {2}, {9, 8, 7, 6, 5, 4, 3}, {1, 1, 1}}
	for _, c := range []struct {
		name    string
		pooling string
		pair    bool
	}{
		{"last", "last", false},
		{"max", "max", false},
		{"pair last", "", true},
		{"pair max", "max", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := torchrt.Do(func() error {
				torchrt.ManualSeed(3)
				m, err := NewBiLSTM(BiLSTMConfig{Vocab: 10, EmbedDim: 6, Hidden: 5, Layers: 2, Classes: 3, LR: 0.01,
					Pooling: c.pooling, Pair: c.pair, HeadHidden: 4}, gotch.CPU)
				if err != nil {
					return err
				}
				defer m.Close()
				scores := func(idx []int) [][]float32 {
					var b *Batch
					var err error
					if c.pair {
						b, err = NewPairBatch(first, second, nil, idx, 0, 0, gotch.CPU)
					} else {
						b, err = NewBatch(first, nil, idx, 0, 0, gotch.CPU)
					}
					if err != nil {
						t.Fatal(err)
					}
					defer b.Drop()
					l, err := m.logits(b, false)
					if err != nil {
						t.Fatal(err)
					}
					defer l.Drop()
					flat := make([]float32, len(idx)*3)
					l.CopyData(flat, uint(len(flat)))
					out := make([][]float32, len(idx))
					for r, o := range b.Order {
						out[o] = flat[r*3 : r*3+3]
					}
					return out
				}
				together := scores([]int{0, 1, 2, 3})
				for i := range first {
					alone := scores([]int{i})[0]
					for k := range alone {
						if math.Abs(float64(alone[k]-together[i][k])) > 1e-5 {
							t.Errorf("example %d: scores alone %v, batched %v", i, alone, together[i])
							break
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
