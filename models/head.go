package models

import (
	"errors"
	"fmt"
	"math"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/torchrt"
)

// head is the classifier on top of an encoder's features: a linear layer
// (hidden = 0) or a one-hidden-layer ReLU MLP, with dropout on the input of
// every layer during training. Parameters are PyTorch's nn.Linear
// initialisation, uniform in ±1/√fan_in.
type head struct {
	params  []*ts.Tensor // w0, b0[, w1, b1]
	dropout float64
}

func newHead(p *nn.Path, in, hidden, classes int64, dropout float64) (head, error) {
	h := head{dropout: dropout}
	layers := [][2]int64{{classes, in}}
	if hidden > 0 {
		layers = [][2]int64{{hidden, in}, {classes, hidden}}
	}
	for i, l := range layers {
		k := 1 / math.Sqrt(float64(l[1]))
		w, err := p.NewVar(fmt.Sprintf("w%d", i), []int64{l[0], l[1]}, nn.NewUniformInit(-k, k))
		if err != nil {
			return h, err
		}
		b, err := p.NewVar(fmt.Sprintf("b%d", i), []int64{l[0]}, nn.NewUniformInit(-k, k))
		if err != nil {
			return h, err
		}
		h.params = append(h.params, w, b)
	}
	return h, nil
}

// forward returns the logits of features x (rows × in); the caller drops
// them. x is not dropped.
func (h head) forward(x *ts.Tensor, train bool) (*ts.Tensor, error) {
	var s torchrt.Scope
	defer s.Drop()
	var err error
	for i := 0; i < len(h.params); i += 2 {
		if train && h.dropout > 0 {
			if x, err = s.Keep(ts.Dropout(x, h.dropout, true)); err != nil {
				return nil, err
			}
		}
		if i+2 == len(h.params) {
			return ts.Linear(x, h.params[i], h.params[i+1])
		}
		if x, err = s.Keep(ts.Linear(x, h.params[i], h.params[i+1])); err != nil {
			return nil, err
		}
		if x, err = s.Keep(x.Relu(false)); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("models: head without layers")
}

// logits is the head over the features of a batch (see features); the
// caller drops the result.
func (h head) logits(b *Batch, train, pair bool, device gotch.Device, encode func(*Batch, bool) (*ts.Tensor, error)) (*ts.Tensor, error) {
	f, err := features(b, train, pair, device, encode)
	if err != nil {
		return nil, err
	}
	defer f.Drop()
	return h.forward(f, train)
}

// features encodes a batch: the encoder's rows × F features for single
// texts, or for sentence pairs (pair set; the batch must carry Second) the
// rows × 4F concatenation [u; v; |u − v|; u ∘ v] of the shared encoder's
// features of both texts, aligned row by row. The caller drops the result.
func features(b *Batch, train, pair bool, device gotch.Device, encode func(*Batch, bool) (*ts.Tensor, error)) (*ts.Tensor, error) {
	if !pair {
		if b.Second != nil {
			return nil, errors.New("models: a sentence-pair batch for a single-text model")
		}
		return encode(b, train)
	}
	if b.Second == nil {
		return nil, errors.New("models: a single-text batch for a sentence-pair model")
	}
	var s torchrt.Scope
	defer s.Drop()
	u, err := s.Keep(encode(b, train))
	if err != nil {
		return nil, err
	}
	v2, err := s.Keep(encode(b.Second, train))
	if err != nil {
		return nil, err
	}
	rows, err := s.Keep(toDevice(b.SecondRows, []int64{int64(len(b.SecondRows))}, device))
	if err != nil {
		return nil, err
	}
	v, err := s.Keep(v2.IndexSelect(0, rows, false))
	if err != nil {
		return nil, err
	}
	diff, err := s.Keep(u.Sub(v, false))
	if err != nil {
		return nil, err
	}
	if diff, err = s.Keep(diff.Abs(false)); err != nil {
		return nil, err
	}
	prod, err := s.Keep(u.Mul(v, false))
	if err != nil {
		return nil, err
	}
	return ts.Cat([]*ts.Tensor{u, v, diff, prod}, 1)
}
