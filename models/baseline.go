package models

import (
	"fmt"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/torchrt"
)

// BaselineConfig sizes the fast baseline: the mean of a text's word
// embeddings, then a linear layer (Hidden = 0) or a one-hidden-layer MLP.
type BaselineConfig struct {
	Vocab, EmbedDim, Classes int64
	Hidden                   int64 // 0: linear head
	Dropout                  float64
	LR                       float64
	ClipNorm                 float64
	Pretrained               []float32 // as for BiLSTMConfig
	Freeze                   bool
	Pair                     bool // sentence pairs: the head sees [u; v; |u − v|; u ∘ v] of the two means
}

// Baseline is the mean-of-embeddings classifier for quick sweeps and
// sanity checks.
type Baseline struct {
	cfg    BaselineConfig
	device gotch.Device
	vs     *nn.VarStore
	opt    *nn.Optimizer
	embed  table
	head   head
}

// NewBaseline builds the model (seed libtorch's generator first).
func NewBaseline(cfg BaselineConfig, device gotch.Device) (*Baseline, error) {
	if err := checkParams("baseline", map[string]any{"head_hidden": cfg.Hidden, "dropout": cfg.Dropout, "lr": cfg.LR, "clip": cfg.ClipNorm, "fine_tune": !cfg.Freeze}); err != nil {
		return nil, err
	}
	switch {
	case cfg.Vocab < 1 || cfg.EmbedDim < 1 || cfg.Classes < 2:
		return nil, fmt.Errorf("baseline: bad config (vocab %d, dim %d, classes %d)", cfg.Vocab, cfg.EmbedDim, cfg.Classes)
	case cfg.Pretrained != nil && int64(len(cfg.Pretrained)) != cfg.Vocab*cfg.EmbedDim:
		return nil, fmt.Errorf("baseline: %d pretrained values for a %d × %d embedding", len(cfg.Pretrained), cfg.Vocab, cfg.EmbedDim)
	case cfg.Freeze && cfg.Pretrained == nil:
		return nil, fmt.Errorf("baseline: freezing needs pretrained embeddings")
	}
	m := &Baseline{cfg: cfg, device: device, vs: nn.NewVarStore(device)}
	root := m.vs.Root()
	var err error
	if m.embed.weight, err = newEmbedding(root, cfg.Vocab, cfg.EmbedDim, cfg.Pretrained, cfg.Freeze, device); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	in := cfg.EmbedDim
	if cfg.Pair {
		in *= 4
	}
	if m.head, err = newHead(root, in, cfg.Hidden, cfg.Classes, cfg.Dropout); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	if m.opt, err = nn.DefaultAdamConfig().Build(m.vs, cfg.LR); err != nil {
		return nil, fmt.Errorf("baseline: optimizer: %w", err)
	}
	return m, nil
}

// logits: the head over the features of the batch.
func (m *Baseline) logits(b *Batch, train bool) (*ts.Tensor, error) {
	return m.head.logits(b, train, m.cfg.Pair, m.device, m.encode)
}

// encode is the masked mean of the embeddings over each row's true length.
func (m *Baseline) encode(b *Batch, _ bool) (*ts.Tensor, error) {
	var s torchrt.Scope
	defer s.Drop()
	size, err := b.Tokens.Size()
	if err != nil {
		return nil, err
	}
	rows, T := size[0], size[1]
	mask := make([]float32, rows*T)
	for r, l := range b.Lengths {
		for t := int64(0); t < l; t++ {
			mask[int64(r)*T+t] = 1 / float32(l)
		}
	}
	mt, err := s.Keep(batchToDevice(mask, []int64{rows, T, 1}, m.device))
	if err != nil {
		return nil, err
	}
	x, err := s.Keep(ts.Embedding(m.embed.get(), b.Tokens, 0, false, false))
	if err != nil {
		return nil, err
	}
	xm, err := s.Keep(x.Mul(mt, false))
	if err != nil {
		return nil, err
	}
	return xm.SumDimIntlist([]int64{1}, false, gotch.Float, false)
}

// Step trains on one labelled batch (see BiLSTM.Step).
func (m *Baseline) Step(b *Batch) (float64, error) { return readLoss(m.StepLoss(b)) }

// StepLoss is Step returning the loss unread (see BiLSTM.StepLoss).
func (m *Baseline) StepLoss(b *Batch) (*ts.Tensor, error) {
	if m.embed.extended != nil {
		return nil, fmt.Errorf("baseline: %w", errExtended)
	}
	return stepLoss(b, m.opt, m.cfg.ClipNorm, nil, m.logits)
}

// Extend appends frozen embedding rows for evaluation (see BiLSTM.Extend).
func (m *Baseline) Extend(rows []float32) error {
	return m.embed.extend(rows, m.cfg.EmbedDim, m.device)
}

// Predict returns arg-max classes in the batch's idx order.
func (m *Baseline) Predict(b *Batch) ([]int64, error) { return predict(b, m.device, m.logits) }

// Save writes the parameters to path.
func (m *Baseline) Save(path string) error { return saveVars(m.vs, path) }

// Load reads parameters saved by Save into a model of the same config.
func (m *Baseline) Load(path string) error { return m.vs.Load(path) }

// SaveOptimizer writes Adam's state to path.
func (m *Baseline) SaveOptimizer(path string) error { return saveOptimizer(m.opt, path) }

// LoadOptimizer restores a state SaveOptimizer wrote.
func (m *Baseline) LoadOptimizer(path string) error { return m.opt.XpLoad(path) }

// Close frees parameters and optimizer state.
func (m *Baseline) Close() {
	m.opt.Drop()
	m.embed.drop()
	for _, t := range m.head.params {
		t.Drop()
	}
}

// baselineKind builds the bag-of-vectors baseline from the baseline
// descriptor's parameters.
var baselineKind = kind{name: "baseline", build: func(v spec.Values, env Env) (Model, error) {
	return NewBaseline(BaselineConfig{Vocab: env.Vocab, EmbedDim: env.EmbedDim, Classes: env.Classes, Pretrained: env.Pretrained, Pair: env.Pair,
		Hidden: int64(v.Int("head_hidden")), Dropout: v.Float("dropout"), LR: v.Float("lr"), ClipNorm: v.Float("clip"), Freeze: !v.Bool("fine_tune")}, env.Device)
}}
