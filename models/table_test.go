package models

import (
	"errors"
	"slices"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/torchrt"
)

// TestExtendMatchesLargerVocabulary trains, for each kind, a model whose
// frozen vocabulary holds 4 rows no training text uses, and a model
// without them; extended by those rows, the second scores texts that use
// them exactly as the first (one trained model serves every evaluated
// split). An extended model refuses to train.
func TestExtendMatchesLargerVocabulary(t *testing.T) {
	c := DefaultSmoke()
	tokens, labels := separable(c)
	const dim, extra = 8, 4
	V := c.Vocab
	pre := make([]float32, (V+extra)*dim)
	for i := range pre {
		pre[i] = float32(i%11)/11 - 0.4
	}
	idx := make([]int, 64)
	for i := range idx {
		idx[i] = i
	}
	unseen := make([][]int64, len(tokens))
	for i, s := range tokens {
		unseen[i] = slices.Clone(s)
		unseen[i][len(s)/2] = int64(V + i%extra) // one token per text is an extension row
	}
	params := map[string]map[string]any{"bilstm": {"hidden": 8}, "baseline": {}}
	for _, kind := range []string{"bilstm", "baseline"} {
		t.Run(kind, func(t *testing.T) {
			scores := func(vocab int, ext bool) (out []float32, stepErr error) {
				err := torchrt.Do(func() error {
					torchrt.ManualSeed(3)
					m, err := New(kind, params[kind], Env{Vocab: int64(vocab), EmbedDim: dim, Classes: 2,
						Pretrained: pre[:vocab*dim], Device: gotch.CPU})
					if err != nil {
						return err
					}
					defer m.Close()
					b, err := NewBatch(tokens, labels, idx, 0, 0, gotch.CPU)
					if err != nil {
						return err
					}
					defer b.Drop()
					for i := 0; i < 5; i++ {
						if _, err := m.Step(b); err != nil {
							return err
						}
					}
					if ext {
						if err := m.Extend(pre[V*dim:]); err != nil {
							return err
						}
						_, stepErr = m.Step(b)
					}
					u, err := NewBatch(unseen, nil, idx, 0, 0, gotch.CPU)
					if err != nil {
						return err
					}
					defer u.Drop()
					l, err := m.(interface {
						logits(*Batch, bool) (*ts.Tensor, error)
					}).logits(u, false)
					if err != nil {
						return err
					}
					defer l.Drop()
					out = make([]float32, 2*len(idx))
					return l.CopyData(out, uint(len(out)))
				})
				if err != nil {
					t.Fatal(err)
				}
				return out, stepErr
			}
			want, _ := scores(V+extra, false)
			got, stepErr := scores(V, true)
			if !slices.Equal(got, want) {
				t.Errorf("extended model scores %v…, want %v…", got[:4], want[:4])
			}
			if !errors.Is(stepErr, errExtended) {
				t.Errorf("Step after Extend: %v, want %v", stepErr, errExtended)
			}
		})
	}
}
