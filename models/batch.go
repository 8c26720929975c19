package models

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// Batch is a mini-batch ready for a model: token ids padded to the longest
// row, rows sorted by decreasing length, the
// true lengths, labels in the same row order, and where each row came from.
type Batch struct {
	Tokens  *ts.Tensor // rows × time, int64, on the model's device
	Labels  *ts.Tensor // rows, int64; nil when unlabelled
	Lengths []int64    // per row, non-increasing, ≥ 1
	Order   []int      // Order[r] is the index (into the idx given to NewBatch) of row r
	// Second is the batch of the second texts of sentence pairs (nil for
	// single texts), sorted by its own lengths; row SecondRows[r] of it
	// pairs with row r of this batch.
	Second     *Batch
	SecondRows []int64
	// Types are the rows' token types (rows × time, int64), where the
	// data carries them (a transformer's sentence pairs packed into one
	// sequence); nil otherwise.
	Types *ts.Tensor

	attention *ts.Tensor // the additive attention mask, made on first use (attentionMask)
}

// NewBatch builds the batch of seqs[idx[0]], seqs[idx[1]], …: sequences
// are cut to maxLen (0: no cut), empty ones become a single pad token, and
// rows are sorted by decreasing length (stable, so equal lengths keep the
// idx order). labels may be nil.
func NewBatch(seqs [][]int64, labels []int64, idx []int, pad int64, maxLen int, device gotch.Device) (*Batch, error) {
	if len(idx) == 0 {
		return nil, fmt.Errorf("models: empty batch")
	}
	b := &Batch{Order: make([]int, len(idx))}
	for i := range b.Order {
		b.Order[i] = i
	}
	length := func(i int) int64 {
		n := len(seqs[idx[i]])
		if maxLen > 0 && n > maxLen {
			n = maxLen
		}
		return int64(max(n, 1))
	}
	slices.SortStableFunc(b.Order, func(x, y int) int { return cmp.Compare(length(y), length(x)) })
	T := length(b.Order[0])
	flat := make([]int64, 0, int64(len(idx))*T)
	var ys []int64
	for _, o := range b.Order {
		s := seqs[idx[o]]
		n := length(o)
		b.Lengths = append(b.Lengths, n)
		if len(s) == 0 {
			flat = append(flat, pad)
		} else {
			flat = append(flat, s[:n]...)
		}
		for t := n; t < T; t++ {
			flat = append(flat, pad)
		}
		if labels != nil {
			ys = append(ys, labels[idx[o]])
		}
	}
	var err error
	if b.Tokens, err = batchToDevice(flat, []int64{int64(len(idx)), T}, device); err != nil {
		return nil, err
	}
	if labels != nil {
		if b.Labels, err = batchToDevice(ys, []int64{int64(len(ys))}, device); err != nil {
			b.Drop()
			return nil, err
		}
	}
	return b, nil
}

// addTypes gives b the token types of its rows (types[idx[o]] for row o,
// cut and padded as the tokens are, padding type 0).
func (b *Batch) addTypes(types [][]int64, idx []int, device gotch.Device) error {
	size, err := b.Tokens.Size()
	if err != nil {
		return err
	}
	T := size[1]
	flat := make([]int64, 0, int64(len(idx))*T)
	for r, o := range b.Order {
		t := types[idx[o]]
		n := min(b.Lengths[r], int64(len(t)))
		flat = append(flat, t[:n]...)
		for k := n; k < T; k++ {
			flat = append(flat, 0)
		}
	}
	b.Types, err = batchToDevice(flat, []int64{int64(len(idx)), T}, device)
	return err
}

// NewPairBatch builds the batch of the pairs (first[i], second[i]) for i
// in idx: the batch of the first texts, carrying the labels, with the
// batch of the second texts in Second.
func NewPairBatch(first, second [][]int64, labels []int64, idx []int, pad int64, maxLen int, device gotch.Device) (*Batch, error) {
	b, err := NewBatch(first, labels, idx, pad, maxLen, device)
	if err != nil {
		return nil, err
	}
	if b.Second, err = NewBatch(second, nil, idx, pad, maxLen, device); err != nil {
		b.Drop()
		return nil, err
	}
	rowOf := make([]int64, len(idx)) // position in idx → row of Second
	for r, o := range b.Second.Order {
		rowOf[o] = int64(r)
	}
	b.SecondRows = make([]int64, len(idx))
	for r, o := range b.Order {
		b.SecondRows[r] = rowOf[o]
	}
	return b, nil
}

// toDevice makes a tensor of shape from v on device (a blocking copy to a
// GPU: for what is uploaded once, as weights and vectors are).
func toDevice[T int64 | float32](v []T, shape []int64, device gotch.Device) (*ts.Tensor, error) {
	t, err := ts.NewTensorFromData(v, shape)
	if err != nil {
		return nil, err
	}
	if device.IsCuda() {
		return t.To(device, true)
	}
	return t, nil
}

// batchToDevice is toDevice for a batch's tensors, uploaded every step:
// to a GPU they travel from pinned (page-locked) memory without blocking.
// A copy from ordinary memory makes the host wait until every kernel
// queued before it has run, so the host could not queue a step's
// operators while the device still computed the last step's. The copy
// is ordered on the stream before the kernels that read it, and libtorch
// keeps the pinned block from reuse until the copy is done (its pinned
// blocks are cached: batches reuse them). Where memory cannot be pinned
// the copy blocks.
func batchToDevice[T int64 | float32](v []T, shape []int64, device gotch.Device) (*ts.Tensor, error) {
	if !device.IsCuda() {
		return toDevice(v, shape, device)
	}
	t, err := ts.NewTensorFromData(v, shape)
	if err != nil {
		return nil, err
	}
	pinned, err := t.PinMemory(device, false)
	if err != nil {
		return t.To(device, true) // no pinned memory here: a blocking copy
	}
	t.Drop()
	return pinned.ToDevice(device, pinned.DType(), true, false, true)
}

// attentionMask is the batch's additive attention mask (rows × 1 × 1 ×
// time, float32: maskValue of each position against its row's length),
// made on first use and kept with the batch, so that a batch stepped on
// again copies nothing more to the device (a copy to a GPU waits for
// its queue to drain).
func (b *Batch) attentionMask(device gotch.Device) (*ts.Tensor, error) {
	if b.attention != nil {
		return b.attention, nil
	}
	size, err := b.Tokens.Size()
	if err != nil {
		return nil, err
	}
	B, T := size[0], size[1]
	add := make([]float32, 0, B*T)
	for _, n := range b.Lengths {
		for i := int64(0); i < T; i++ {
			add = append(add, maskValue(i < n))
		}
	}
	if b.attention, err = batchToDevice(add, []int64{B, 1, 1, T}, device); err != nil {
		return nil, err
	}
	return b.attention, nil
}

// Drop frees the batch's tensors.
func (b *Batch) Drop() {
	if b.attention != nil {
		b.attention.Drop()
		b.attention = nil
	}
	if b.Tokens != nil {
		b.Tokens.Drop()
	}
	if b.Labels != nil {
		b.Labels.Drop()
	}
	if b.Second != nil {
		b.Second.Drop()
	}
	if b.Types != nil {
		b.Types.Drop()
	}
}
