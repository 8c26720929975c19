package models

import (
	"fmt"
	"path/filepath"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/hf"
	"github.com/xp-nlp/xp/spec"
)

// Model is a classifier that holds libtorch memory until Close.
type Model interface {
	Classifier
	Close()
}

// Env is what a model is built for: the data's shape, the initial
// embedding and the device. Hyperparameters come from the kind's
// descriptor in spec.
type Env struct {
	Vocab, EmbedDim, Classes int64
	// Pretrained is the Vocab × EmbedDim initial embedding (see
	// EmbeddingMatrix); required unless the parameters fine-tune.
	Pretrained []float32
	Pair       bool // sentence pairs
	Device     gotch.Device
	// Checkpoint is the folder of a pieces model's pretrained checkpoint
	// (spec's Pieces), and Steps the optimisation steps its training
	// will take (its learning-rate schedule's length).
	Checkpoint string
	Steps      int
}

var builders = map[string]func(v spec.Values, env Env) (Model, error){
	"bilstm": func(v spec.Values, env Env) (Model, error) {
		return NewBiLSTM(BiLSTMConfig{Vocab: env.Vocab, EmbedDim: env.EmbedDim, Classes: env.Classes, Pretrained: env.Pretrained, Pair: env.Pair,
			Hidden: int64(v.Int("hidden")), Layers: int64(v.Int("layers")), Pooling: v.String("pooling"), HeadHidden: int64(v.Int("head_hidden")),
			Dropout: v.Float("dropout"), LR: v.Float("lr"), ClipNorm: v.Float("clip"), Freeze: !v.Bool("fine_tune")}, env.Device)
	},
	"transformer": func(v spec.Values, env Env) (Model, error) {
		cfg, err := hf.ReadConfig(env.Checkpoint)
		if err != nil {
			return nil, err
		}
		st, err := hf.OpenSafetensors(filepath.Join(env.Checkpoint, "model.safetensors"))
		if err != nil {
			return nil, err
		}
		defer st.Close()
		m, _, err := NewBert(cfg, st, BertOptions{Classes: int(env.Classes), Dropout: v.Float("dropout"), LR: v.Float("lr"),
			Warmup: v.Float("warmup"), TotalSteps: env.Steps, Clip: v.Float("clip"), Precision: v.String("precision")}, env.Device)
		return m, err
	},
	"baseline": func(v spec.Values, env Env) (Model, error) {
		return NewBaseline(BaselineConfig{Vocab: env.Vocab, EmbedDim: env.EmbedDim, Classes: env.Classes, Pretrained: env.Pretrained, Pair: env.Pair,
			Hidden: int64(v.Int("head_hidden")), Dropout: v.Float("dropout"), LR: v.Float("lr"), ClipNorm: v.Float("clip"), Freeze: !v.Bool("fine_tune")}, env.Device)
	},
}

// New builds a model of the named kind (see spec: bilstm, baseline) from
// its parameters as a config gives them, checked and completed with
// defaults by the kind's descriptor. Seed libtorch's generator first
// (torchrt.ManualSeed): parameters are drawn from it.
func New(kind string, params map[string]any, env Env) (Model, error) {
	_, v, err := spec.Resolve(spec.Model, kind, 0, params)
	if err != nil {
		return nil, err
	}
	build, ok := builders[kind]
	if !ok {
		return nil, fmt.Errorf("model kind %s is described in spec but not built by models", kind)
	}
	return build(v, env)
}

// checkParams validates a typed config's hyperparameters by the kind's
// descriptor: the one place each rule lives.
func checkParams(kind string, raw map[string]any) error {
	_, _, err := spec.Resolve(spec.Model, kind, 0, raw)
	return err
}
