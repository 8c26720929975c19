package models

import (
	"fmt"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/torchrt"
)

// Tagger is a bidirectional LSTM that scores every token: the BiLSTM's
// embedding and layers, its head applied to each true position's
// 2·hidden outputs (both directions at that token) instead of a pooled
// text. Classes are the tag classes. It trains and predicts on batches
// from NewTagBatch. The privacy analyses' reconstruction attacker is one.
type Tagger struct {
	m *BiLSTM
}

// NewTagger creates a tagger; cfg is a BiLSTM's (Pooling and Pair are
// ignored). Seed libtorch's generator first (torchrt.ManualSeed).
func NewTagger(cfg BiLSTMConfig, device gotch.Device) (*Tagger, error) {
	cfg.Pooling, cfg.Pair = "last", false
	m, err := NewBiLSTM(cfg, device)
	if err != nil {
		return nil, fmt.Errorf("tagger: %w", err)
	}
	return &Tagger{m: m}, nil
}

// NewTagBatch is NewBatch with one tag per kept token: Labels holds the
// tags of every true position, row by row in the batch's order (rows
// sorted by length, each cut to maxLen). An empty sequence's pad token
// is tagged −100, which the loss ignores.
func NewTagBatch(seqs, tags [][]int64, idx []int, pad int64, maxLen int, device gotch.Device) (*Batch, error) {
	b, err := NewBatch(seqs, nil, idx, pad, maxLen, device)
	if err != nil {
		return nil, err
	}
	if tags == nil {
		return b, nil
	}
	var flat []int64
	for r, o := range b.Order {
		tg := tags[idx[o]]
		if len(tg) != len(seqs[idx[o]]) {
			b.Drop()
			return nil, fmt.Errorf("models: %d tags for %d tokens", len(tg), len(seqs[idx[o]]))
		}
		for t := int64(0); t < b.Lengths[r]; t++ {
			if len(tg) == 0 {
				flat = append(flat, -100)
				continue
			}
			flat = append(flat, tg[t])
		}
	}
	if b.Labels, err = toDevice(flat, []int64{int64(len(flat))}, device); err != nil {
		b.Drop()
		return nil, err
	}
	return b, nil
}

// tokenLogits returns the true positions' tag scores (positions × classes,
// row by row in the batch's order); the caller drops the result.
func (t *Tagger) tokenLogits(b *Batch, train bool) (*ts.Tensor, error) {
	var s torchrt.Scope
	defer s.Drop()
	m := t.m
	r, err := m.run(&s, b, train)
	if err != nil {
		return nil, err
	}
	rows, T, ix, out := r.rows, r.T, r.ix, r.out
	valid, err := s.Keep(toDevice(ix.valid, []int64{int64(len(ix.valid))}, m.device))
	if err != nil {
		return nil, err
	}
	return gather(&s, out, valid, rows*T, 2*m.cfg.Hidden, func(f *ts.Tensor) (*ts.Tensor, error) {
		return m.head.forward(f, train)
	})
}

// Step trains on one tagged batch (NewTagBatch) and returns its mean loss
// over the tagged tokens.
func (t *Tagger) Step(b *Batch) (float64, error) {
	return step(b, t.m.opt, t.m.cfg.ClipNorm, nil, t.tokenLogits)
}

// Predict returns the arg-max tag of every kept token, per sequence in
// the order of the idx the batch was built from.
func (t *Tagger) Predict(b *Batch) ([][]int64, error) {
	flat, err := predictRows(b, t.m.device, t.tokenLogits)
	if err != nil {
		return nil, err
	}
	out := make([][]int64, len(b.Order))
	pos := int64(0)
	for r, o := range b.Order {
		out[o] = flat[pos : pos+b.Lengths[r]]
		pos += b.Lengths[r]
	}
	return out, nil
}

// Close frees the tagger's parameters and optimizer state.
func (t *Tagger) Close() { t.m.Close() }
