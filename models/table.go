package models

import (
	"errors"
	"fmt"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// table is a model's embedding matrix: the stored parameter and, after
// extend, a frozen copy with rows appended for words the model never saw
// in training. One trained model serves every evaluated split: a word of
// an evaluated text that has a pretrained vector but is not in the
// model's vocabulary reaches the model through that vector, exactly as
// it would have had its row been in the vocabulary all along (the row of
// a word absent from training gets no gradient).
type table struct {
	weight   *ts.Tensor // the parameter (in the model's VarStore)
	extended *ts.Tensor // nil until extend: weight's rows, then the appended ones
}

// get is the matrix lookups read.
func (t *table) get() *ts.Tensor {
	if t.extended != nil {
		return t.extended
	}
	return t.weight
}

// errExtended refuses training a model whose table was extended: the
// appended rows are evaluation-only.
var errExtended = errors.New("model extended for evaluation cannot train")

// extend appends rows (n × dim values) after the vocabulary, replacing
// any earlier extension.
func (t *table) extend(rows []float32, dim int64, device gotch.Device) error {
	if len(rows)%int(dim) != 0 {
		return fmt.Errorf("extend: %d values are not rows of %d", len(rows), dim)
	}
	if t.extended != nil {
		t.extended.Drop()
		t.extended = nil
	}
	if len(rows) == 0 {
		return nil
	}
	extra, err := toDevice(rows, []int64{int64(len(rows)) / dim, dim}, device)
	if err != nil {
		return fmt.Errorf("extend: %w", err)
	}
	defer extra.Drop()
	w, err := t.weight.DetachCopy(false)
	if err != nil {
		return fmt.Errorf("extend: %w", err)
	}
	defer w.Drop()
	if t.extended, err = ts.Cat([]*ts.Tensor{w, extra}, 0); err != nil {
		return fmt.Errorf("extend: %w", err)
	}
	return nil
}

func (t *table) drop() {
	t.weight.Drop()
	if t.extended != nil {
		t.extended.Drop()
	}
}
