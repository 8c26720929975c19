package models

import (
	"fmt"
	"slices"

	"github.com/sugarme/gotch"

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

// kind is what models knows of one model kind beyond its descriptor in
// spec (its parameters, ranges and defaults, whether it reads its own
// tokenizer's pieces), declared once in the kind's own file: how it is
// built from resolved parameters.
type kind struct {
	name  string
	build func(v spec.Values, env Env) (Model, error)
}

// kinds are the model kinds models builds, one per descriptor of spec
// (TestRegistry); each value lives in its model's file.
var kinds = []kind{bilstmKind, baselineKind, transformerKind}

// kindOf is the named model kind.
func kindOf(name string) (kind, bool) {
	i := slices.IndexFunc(kinds, func(k kind) bool { return k.name == name })
	if i < 0 {
		return kind{}, false
	}
	return kinds[i], true
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
	k, ok := kindOf(kind)
	if !ok {
		return nil, fmt.Errorf("model kind %s is described in spec but not built by models", kind)
	}
	return k.build(v, env)
}

// checkParams validates a typed config's hyperparameters by the kind's
// descriptor: the one place each rule lives.
func checkParams(kind string, raw map[string]any) error {
	_, _, err := spec.Resolve(spec.Model, kind, 0, raw)
	return err
}
