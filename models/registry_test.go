package models

import (
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/internal/hftest"
	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/torchrt"
)

// TestRegistry: every model kind spec describes is built, from the same
// parameters a config gives, and the descriptor's rules refuse bad ones.
func TestRegistry(t *testing.T) {
	names := spec.Names(spec.Model)
	for _, n := range names {
		if _, ok := kindOf(n); !ok {
			t.Errorf("model kind %s is described in spec but has no kind value in models", n)
		}
	}
	for _, k := range kinds {
		if _, err := spec.Lookup(spec.Model, k.name); err != nil {
			t.Errorf("models builds %s, which spec does not describe: %v", k.name, err)
		}
	}
	ck := t.TempDir()
	if _, err := (hftest.Bert{Hidden: 8, Layers: 1, Heads: 2, Intermediate: 16, MaxPositions: 16, Seed: 1}).Write(ck); err != nil {
		t.Fatal(err)
	}
	env := Env{Vocab: 10, EmbedDim: 4, Classes: 2, Pretrained: make([]float32, 40), Device: gotch.CPU, Checkpoint: ck, Steps: 10}
	params := func(kind string) map[string]any {
		if d, err := spec.Lookup(spec.Model, kind); err == nil && d.Pieces {
			return map[string]any{"checkpoint": ck, "clip": 0}
		}
		return map[string]any{"head_hidden": 3, "clip": 0}
	}
	err := torchrt.Do(func() error {
		for _, n := range names {
			m, err := New(n, params(n), env)
			if err != nil {
				t.Errorf("%s: %v", n, err)
				continue
			}
			m.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind   string
		params map[string]any
		want   string
	}{
		{"bilstm", map[string]any{"dropout": 1.0}, "bilstm: parameter dropout = 1, want a number in [0, 1)"},
		{"baseline", map[string]any{"hidden": 8}, `baseline: unknown parameter "hidden"`},
		{"transformer", nil, "transformer: parameter checkpoint is required"},
		{"transformer", map[string]any{"checkpoint": ck, "lr": 0.0}, "transformer: parameter lr = 0, want a number in (0, ∞)"},
		{"gpt", nil, `unknown model "gpt" (known: `},
	} {
		if _, err := New(c.kind, c.params, env); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v", c.kind, c.params, err)
		}
	}
	// The unknown name's message lists every kind (read from spec, so
	// that a new kind needs no change here: TestChecklistWalk).
	_, err = New("gpt", nil, env)
	for _, n := range names {
		if err == nil || !strings.Contains(err.Error(), n) {
			t.Errorf("unknown model: %v, does not name %s", err, n)
		}
	}
}
