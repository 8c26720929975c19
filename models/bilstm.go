package models

import (
	"errors"
	"fmt"
	"math"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/torchrt"
)

// BiLSTMConfig sizes a BiLSTM text classifier.
type BiLSTMConfig struct {
	Vocab    int64 // embedding rows; row 0 is padding
	EmbedDim int64
	Hidden   int64 // per direction
	Layers   int64
	Classes  int64
	Dropout  float64 // between LSTM layers and on the head's inputs, training only
	// Pooling turns the last layer's outputs into the text's features:
	// "last" (or "") concatenates the final forward and backward states,
	// "max" takes the maximum of every output feature over the text's
	// own tokens.
	Pooling string
	// Pair makes a sentence-pair model: one encoder shared by both texts,
	// the head over [u; v; |u − v|; u ∘ v].
	Pair bool
	// HeadHidden is the hidden width of the MLP head (0: a linear head).
	HeadHidden int64
	LR         float64 // Adam learning rate
	ClipNorm   float64 // global gradient-norm bound; 0 disables clipping
	PadIndex   int64   // token id of padding (its embedding gets no gradient)
	// Pretrained, when set, is the Vocab × EmbedDim initial embedding
	// matrix (see EmbeddingMatrix); otherwise embeddings start standard
	// normal.
	Pretrained []float32
	// Freeze keeps the pretrained embeddings fixed (the default of the
	// papers' setups): they are not trained and not in the optimizer.
	Freeze bool
}

func (c BiLSTMConfig) validate() error {
	pooling := c.Pooling
	if pooling == "" {
		pooling = "last"
	}
	if err := checkParams("bilstm", map[string]any{"hidden": c.Hidden, "layers": c.Layers, "pooling": pooling, "head_hidden": c.HeadHidden,
		"dropout": c.Dropout, "lr": c.LR, "clip": c.ClipNorm, "fine_tune": !c.Freeze}); err != nil {
		return err
	}
	switch {
	case c.Vocab < 1, c.EmbedDim < 1:
		return fmt.Errorf("bilstm: vocab and embed_dim must be positive: %+v", c)
	case c.Classes < 2:
		return fmt.Errorf("bilstm: need at least 2 classes, got %d", c.Classes)
	case c.Pretrained != nil && int64(len(c.Pretrained)) != c.Vocab*c.EmbedDim:
		return fmt.Errorf("bilstm: %d pretrained values for a %d × %d embedding", len(c.Pretrained), c.Vocab, c.EmbedDim)
	case c.Freeze && c.Pretrained == nil:
		return fmt.Errorf("bilstm: freezing needs pretrained embeddings")
	}
	return nil
}

// BiLSTM is embedding → bidirectional LSTM → pooling (final states or
// max) → linear or MLP head; for sentence pairs the encoder is shared and
// the head sees [u; v; |u − v|; u ∘ v]. Its parameters live in one
// VarStore on one device.
type BiLSTM struct {
	cfg    BiLSTMConfig
	device gotch.Device
	vs     *nn.VarStore
	opt    *nn.Optimizer
	embed  table
	lstm   []*ts.Tensor // per layer and direction: w_ih, w_hh, b_ih, b_hh
	head   head
}

// NewBiLSTM creates the model with parameters drawn from libtorch's
// generator (seed it with torchrt.ManualSeed first): LSTM weights and biases
// uniform in ±1/√hidden and the head's layers uniform in ±1/√fan_in, as
// PyTorch initialises them; embeddings standard normal unless pretrained.
func NewBiLSTM(cfg BiLSTMConfig, device gotch.Device) (*BiLSTM, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m := &BiLSTM{cfg: cfg, device: device, vs: nn.NewVarStore(device)}
	root := m.vs.Root()
	var err error
	if m.embed.weight, err = newEmbedding(root, cfg.Vocab, cfg.EmbedDim, cfg.Pretrained, cfg.Freeze, device); err != nil {
		return nil, fmt.Errorf("bilstm: %w", err)
	}
	k := 1 / math.Sqrt(float64(cfg.Hidden))
	gates := 4 * cfg.Hidden
	for l := int64(0); l < cfg.Layers; l++ {
		in := cfg.EmbedDim
		if l > 0 {
			in = 2 * cfg.Hidden
		}
		for _, suffix := range []string{"", "_reverse"} {
			for _, p := range []struct {
				name string
				dims []int64
			}{
				{"weight_ih", []int64{gates, in}},
				{"weight_hh", []int64{gates, cfg.Hidden}},
				{"bias_ih", []int64{gates}},
				{"bias_hh", []int64{gates}},
			} {
				t, err := root.Sub("lstm").NewVar(fmt.Sprintf("%s_l%d%s", p.name, l, suffix), p.dims, nn.NewUniformInit(-k, k))
				if err != nil {
					return nil, fmt.Errorf("bilstm: %w", err)
				}
				m.lstm = append(m.lstm, t)
			}
		}
	}
	in := 2 * cfg.Hidden
	if cfg.Pair {
		in *= 4
	}
	if m.head, err = newHead(root.Sub("head"), in, cfg.HeadHidden, cfg.Classes, cfg.Dropout); err != nil {
		return nil, fmt.Errorf("bilstm: %w", err)
	}
	if m.opt, err = nn.DefaultAdamConfig().Build(m.vs, cfg.LR); err != nil {
		return nil, fmt.Errorf("bilstm: optimizer: %w", err)
	}
	return m, nil
}

// newEmbedding adds the embedding matrix to the store: the pretrained
// values (trainable unless frozen) or standard-normal values.
func newEmbedding(root *nn.Path, vocab, dim int64, pretrained []float32, freeze bool, device gotch.Device) (*ts.Tensor, error) {
	if pretrained == nil {
		return root.Randn("embedding", []int64{vocab, dim}, 0, 1)
	}
	src, err := toDevice(pretrained, []int64{vocab, dim}, device)
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	defer src.Drop()
	return root.Add("embedding", src, !freeze)
}

// logits runs the model on a batch and returns rows × classes scores
// (rows in the batch's order). The caller drops the result.
func (m *BiLSTM) logits(b *Batch, train bool) (*ts.Tensor, error) {
	return m.head.logits(b, train, m.cfg.Pair, m.device, m.encode)
}

// encode returns the rows × 2·hidden features of a batch of single texts.
//
// Each direction runs as its own unidirectional LSTM over the padded
// batch: the forward one over the tokens as they are (padding comes after
// each row's last token, so it never reaches the states read), the
// backward one over each row's tokens reversed within its own length
// (padding again comes last). The final states are the outputs at each
// row's last true position, and max pooling sees only true positions, so
// padding never changes a row's features (TestPaddingInvariance).
//
// This is what PyTorch computes over a PackedSequence, but libtorch 1.13's
// backward through the packed LSTM is quadratic in the length on the CPU
// (docs/models.md has the measurement), so packed sequences are not used.
func (m *BiLSTM) encode(b *Batch, train bool) (*ts.Tensor, error) {
	var s torchrt.Scope
	defer s.Drop()
	r, err := m.run(&s, b, train)
	if err != nil {
		return nil, err
	}
	rows, T, ix, out, fwd, bwdRev := r.rows, r.T, r.ix, r.out, r.fwd, r.bwdRev
	if m.cfg.Pooling == "max" {
		valid, err := s.Keep(toDevice(ix.valid, []int64{int64(len(ix.valid))}, m.device))
		if err != nil {
			return nil, err
		}
		return gather(&s, out, valid, rows*T, 2*m.cfg.Hidden, func(vals *ts.Tensor) (*ts.Tensor, error) {
			return maxPool(vals, valid, rows, T, 2*m.cfg.Hidden, m.device)
		})
	}
	// The forward direction's final state is its output at the last true
	// position; the backward direction's is the reversed run's output at
	// the same position (it has then read the row's first token).
	last, err := s.Keep(toDevice(ix.last, []int64{int64(len(ix.last))}, m.device))
	if err != nil {
		return nil, err
	}
	var finals []*ts.Tensor
	for _, v := range []*ts.Tensor{fwd, bwdRev} {
		f, err := gather(&s, v, last, rows*T, m.cfg.Hidden, func(f *ts.Tensor) (*ts.Tensor, error) { return f, nil }) // gather keeps it
		if err != nil {
			return nil, err
		}
		finals = append(finals, f)
	}
	return ts.Cat(finals, 1)
}

// layerRun is the stacked LSTM's run over a batch: its shape, positions
// and the outputs of layers.
type layerRun struct {
	rows, T          int64
	ix               rowIndex
	out, fwd, bwdRev *ts.Tensor
}

// run embeds a batch of single texts and runs the layers over it; the
// tensors are kept in s.
func (m *BiLSTM) run(s *torchrt.Scope, b *Batch, train bool) (layerRun, error) {
	var r layerRun
	var err error
	if r.rows, r.T, err = batchShape(b); err != nil {
		return r, err
	}
	r.ix = newRowIndex(b.Lengths, r.T)
	rev, err := s.Keep(toDevice(r.ix.reverse, []int64{int64(len(r.ix.reverse))}, m.device))
	if err != nil {
		return r, err
	}
	x, err := s.Keep(ts.Embedding(m.embed.get(), b.Tokens, m.cfg.PadIndex, false, false))
	if err != nil {
		return r, err
	}
	r.out, r.fwd, r.bwdRev, err = m.layers(s, x, r.rows, r.T, rev, train)
	return r, err
}

// batchShape checks a batch of single texts and returns its rows and
// padded length.
func batchShape(b *Batch) (rows, T int64, err error) {
	size, err := b.Tokens.Size()
	if err != nil {
		return 0, 0, err
	}
	if len(size) != 2 || int(size[0]) != len(b.Lengths) {
		return 0, 0, fmt.Errorf("bilstm: tokens of shape %v for %d lengths", size, len(b.Lengths))
	}
	for _, l := range b.Lengths {
		if l < 1 || l > size[1] {
			return 0, 0, fmt.Errorf("bilstm: lengths %v must lie within [1, %d]", b.Lengths, size[1])
		}
	}
	return size[0], size[1], nil
}

// layers runs the stacked bidirectional LSTM over the embedded batch x
// (rows × T × E): each layer's input is the previous layer's
// concatenated directions, with dropout between layers in training. It
// returns the last layer's rows × T × 2H outputs and its forward outputs
// and reversed backward outputs (rows × T × H each), all kept in s.
func (m *BiLSTM) layers(s *torchrt.Scope, x *ts.Tensor, rows, T int64, rev *ts.Tensor, train bool) (out, fwd, bwdRev *ts.Tensor, err error) {
	H := m.cfg.Hidden
	h0, err := s.Keep(ts.Zeros([]int64{1, rows, H}, gotch.Float, m.device))
	if err != nil {
		return nil, nil, nil, err
	}
	// run is one direction of one layer over a batch-first input.
	run := func(in *ts.Tensor, params []*ts.Tensor) (*ts.Tensor, error) {
		o, h, c, err := ts.Lstm(in, []*ts.Tensor{h0, h0}, params, true, 1, 0, train, false, true)
		if err != nil {
			return nil, fmt.Errorf("bilstm: lstm: %w", err)
		}
		h.Drop()
		c.Drop()
		return s.Keep(o, nil)
	}
	// reverse flips each row within its length: rows × T × F in and out.
	reverse := func(v *ts.Tensor, F int64) (*ts.Tensor, error) {
		return gather(s, v, rev, rows*T, F, func(r *ts.Tensor) (*ts.Tensor, error) {
			return s.Keep(r.Reshape([]int64{rows, T, F}, false))
		})
	}
	in, inDim := x, m.cfg.EmbedDim
	for l := int64(0); l < m.cfg.Layers; l++ {
		if l > 0 && train && m.cfg.Dropout > 0 {
			if in, err = s.Keep(ts.Dropout(in, m.cfg.Dropout, true)); err != nil {
				return nil, nil, nil, err
			}
		}
		p := m.lstm[8*l : 8*l+8]
		if fwd, err = run(in, p[:4]); err != nil {
			return nil, nil, nil, err
		}
		inRev, err := reverse(in, inDim)
		if err != nil {
			return nil, nil, nil, err
		}
		if bwdRev, err = run(inRev, p[4:]); err != nil {
			return nil, nil, nil, err
		}
		bwd, err := reverse(bwdRev, H)
		if err != nil {
			return nil, nil, nil, err
		}
		if in, err = s.Keep(ts.Cat([]*ts.Tensor{fwd, bwd}, 2)); err != nil {
			return nil, nil, nil, err
		}
		inDim = 2 * H
	}
	return in, fwd, bwdRev, nil
}

// gather selects the rows index of v seen as n × F (flat positions of a
// padded batch) and hands them to then.
func gather(s *torchrt.Scope, v, index *ts.Tensor, n, F int64, then func(*ts.Tensor) (*ts.Tensor, error)) (*ts.Tensor, error) {
	flat, err := s.Keep(v.Reshape([]int64{n, F}, false))
	if err != nil {
		return nil, err
	}
	sel, err := s.Keep(flat.IndexSelect(0, index, false))
	if err != nil {
		return nil, err
	}
	return then(sel)
}

// rowIndex holds flat (row·T + t) positions of a padded batch.
type rowIndex struct {
	reverse []int64 // position of the token each position reads when rows are reversed within their lengths (an involution)
	last    []int64 // each row's last true position
	valid   []int64 // every true position, row by row
}

func newRowIndex(lengths []int64, T int64) rowIndex {
	var ix rowIndex
	for r, l := range lengths {
		base := int64(r) * T
		for t := int64(0); t < T; t++ {
			if t < l {
				ix.reverse = append(ix.reverse, base+l-1-t)
				ix.valid = append(ix.valid, base+t)
			} else {
				ix.reverse = append(ix.reverse, base+t)
			}
		}
		ix.last = append(ix.last, base+l-1)
	}
	return ix
}

// maxPool scatters the outputs at true positions (their rows·T positions
// in index) into a rows × T × F tensor whose padding positions hold −∞,
// and returns the maximum over time: rows × F.
func maxPool(vals, index *ts.Tensor, rows, T, F int64, device gotch.Device) (*ts.Tensor, error) {
	var s torchrt.Scope
	defer s.Drop()
	inf := ts.FloatScalar(math.Inf(-1))
	defer inf.Drop()
	full, err := s.Keep(ts.Full([]int64{rows * T, F}, inf, gotch.Float, device))
	if err != nil {
		return nil, err
	}
	padded, err := s.Keep(full.IndexCopy(0, index, vals, false))
	if err != nil {
		return nil, err
	}
	grid, err := s.Keep(padded.View([]int64{rows, T, F}, false))
	if err != nil {
		return nil, err
	}
	return grid.Amax([]int64{1}, false, false)
}

// Step trains on one labelled batch: forward, cross-entropy, backward,
// gradient clipping to ClipNorm, Adam update. It returns the batch's mean
// loss.
func (m *BiLSTM) Step(b *Batch) (float64, error) { return readLoss(m.StepLoss(b)) }

// StepLoss is Step returning the loss where it was computed, unread (the
// caller drops it): Train reads it a step later on a GPU.
func (m *BiLSTM) StepLoss(b *Batch) (*ts.Tensor, error) {
	if m.embed.extended != nil {
		return nil, fmt.Errorf("bilstm: %w", errExtended)
	}
	return stepLoss(b, m.opt, m.cfg.ClipNorm, nil, m.logits)
}

// Extend appends frozen embedding rows (n × EmbedDim values) after the
// vocabulary for evaluation: token ids Vocab … Vocab+n−1 reach the model
// through them (see table). Step refuses an extended model; Save writes
// the trained parameters only.
func (m *BiLSTM) Extend(rows []float32) error { return m.embed.extend(rows, m.cfg.EmbedDim, m.device) }

// Predict returns the arg-max class of each example of the batch, in the
// order of the idx the batch was built from.
func (m *BiLSTM) Predict(b *Batch) ([]int64, error) {
	return predict(b, m.device, m.logits)
}

// step is one optimisation step of any model given its logits function
// (stepLoss), its loss read.
func step(b *Batch, opt *nn.Optimizer, clip float64, decay func() error, logits func(*Batch, bool) (*ts.Tensor, error)) (float64, error) {
	return readLoss(stepLoss(b, opt, clip, decay, logits))
}

// stepLoss is one optimisation step of any model given its logits
// function: the loss, gradients clipped to the norm clip (0: not), decay
// (nil: none) on the weights between the gradients and the optimizer's
// update, and the update. It returns the loss unread, on the model's
// device (the caller drops it): reading it waits for the device.
func stepLoss(b *Batch, opt *nn.Optimizer, clip float64, decay func() error, logits func(*Batch, bool) (*ts.Tensor, error)) (_ *ts.Tensor, err error) {
	if b.Labels == nil {
		return nil, errors.New("models: training batch without labels")
	}
	l, err := logits(b, true)
	if err != nil {
		return nil, err
	}
	defer l.Drop()
	loss, err := l.CrossEntropyLoss(b.Labels, ts.None, 1, -100, 0, false)
	if err != nil {
		return nil, fmt.Errorf("models: loss: %w", err)
	}
	defer func() {
		if err != nil {
			loss.Drop()
		}
	}()
	if err := opt.ZeroGrad(); err != nil {
		return nil, err
	}
	if err := loss.Backward(); err != nil {
		return nil, fmt.Errorf("models: backward: %w", err)
	}
	if clip > 0 {
		if err := opt.ClipGradNorm(clip); err != nil {
			return nil, err
		}
	}
	if decay != nil {
		if err := decay(); err != nil {
			return nil, err
		}
	}
	if err := opt.Step(); err != nil {
		return nil, fmt.Errorf("models: optimizer step: %w", err)
	}
	return loss, nil
}

// readLoss reads a step's loss and drops it; a NaN or infinite loss (a
// diverged training) is an error.
func readLoss(loss *ts.Tensor, err error) (float64, error) {
	if err != nil {
		return 0, err
	}
	defer loss.Drop()
	v, err := loss.Float64Value([]int64{})
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v, fmt.Errorf("models: loss is %v: the training diverged", v)
	}
	return v, nil
}

// predict runs logits without gradients and returns arg-max classes in
// the order of the idx the batch was built from.
func predict(b *Batch, device gotch.Device, logits func(*Batch, bool) (*ts.Tensor, error)) ([]int64, error) {
	rows, err := predictRows(b, device, logits)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(rows))
	for r, o := range b.Order {
		out[o] = rows[r]
	}
	return out, nil
}

// predictRows runs logits without gradients and returns the arg-max
// class of each of its rows, in the logits' order.
func predictRows(b *Batch, device gotch.Device, logits func(*Batch, bool) (*ts.Tensor, error)) ([]int64, error) {
	prev, err := ts.GradSetEnabled(false)
	if err != nil {
		return nil, err
	}
	defer ts.GradSetEnabled(prev)
	l, err := logits(b, false)
	if err != nil {
		return nil, err
	}
	defer l.Drop()
	size, err := l.Size()
	if err != nil {
		return nil, err
	}
	arg, err := l.Argmax([]int64{1}, false, false)
	if err != nil {
		return nil, err
	}
	if device.IsCuda() {
		if arg, err = arg.To(gotch.CPU, true); err != nil {
			return nil, err
		}
	}
	defer arg.Drop()
	rows := make([]int64, size[0])
	if err := arg.CopyData(rows, uint(len(rows))); err != nil {
		return nil, err
	}
	return rows, nil
}

// Save writes the model's parameters (embedding included, frozen or not)
// to path in libtorch's format. The optimizer state is not saved (see
// SaveOptimizer): a loaded model predicts exactly as the saved one.
func (m *BiLSTM) Save(path string) error {
	if err := saveVars(m.vs, path); err != nil {
		return fmt.Errorf("bilstm: save %s: %w", path, err)
	}
	return nil
}

// Load replaces the model's parameters by those saved at path; the model
// must have been built with the same configuration.
func (m *BiLSTM) Load(path string) error {
	if err := m.vs.Load(path); err != nil {
		return fmt.Errorf("bilstm: load %s: %w", path, err)
	}
	return nil
}

// SaveOptimizer writes Adam's state (moments, step counts) to path.
func (m *BiLSTM) SaveOptimizer(path string) error { return saveOptimizer(m.opt, path) }

// LoadOptimizer restores a state SaveOptimizer wrote for a model of the
// same configuration.
func (m *BiLSTM) LoadOptimizer(path string) error { return m.opt.XpLoad(path) }

// Close frees the model's parameters and optimizer state.
func (m *BiLSTM) Close() {
	m.opt.Drop()
	m.embed.drop()
	for _, t := range append(m.head.params, m.lstm...) {
		t.Drop()
	}
}

// bilstmKind builds a biLSTM from the bilstm descriptor's parameters.
var bilstmKind = kind{name: "bilstm", build: func(v spec.Values, env Env) (Model, error) {
	return NewBiLSTM(BiLSTMConfig{Vocab: env.Vocab, EmbedDim: env.EmbedDim, Classes: env.Classes, Pretrained: env.Pretrained, Pair: env.Pair,
		Hidden: int64(v.Int("hidden")), Layers: int64(v.Int("layers")), Pooling: v.String("pooling"), HeadHidden: int64(v.Int("head_hidden")),
		Dropout: v.Float("dropout"), LR: v.Float("lr"), ClipNorm: v.Float("clip"), Freeze: !v.Bool("fine_tune")}, env.Device)
}}
