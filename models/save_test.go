package models

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/torchrt"
)

type mapVectors map[string][]float32

func (m mapVectors) Index(w string) (int, bool) {
	for i, k := range []string{"good", "bad"} {
		if k == w {
			_, ok := m[w]
			return i, ok
		}
	}
	return 0, false
}

func (m mapVectors) Vector(i int) []float32 { return m[[]string{"good", "bad"}[i]] }

func TestEmbeddingMatrix(t *testing.T) {
	v := mapVectors{"good": {1, 2}, "bad": {3, 4}}
	m, missing, err := EmbeddingMatrix([]string{"<pad>", "good", "zzz", "bad"}, v, 2, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if missing != 1 || !slices.Equal(m[:4], []float32{0, 0, 1, 2}) || !slices.Equal(m[6:], []float32{3, 4}) {
		t.Errorf("matrix %v, missing %d", m, missing)
	}
	if m[4] < -0.25 || m[4] > 0.25 || m[4] == 0 {
		t.Errorf("unknown word row %v", m[4:6])
	}
	again, _, _ := EmbeddingMatrix([]string{"<pad>", "good", "zzz", "bad"}, v, 2, 0, 1)
	if !slices.Equal(m, again) {
		t.Error("same seed, different matrix")
	}
}

// TestSaveLoadAndFreeze trains a model with frozen pretrained embeddings a
// few steps, saves it, loads the file into a model built with another
// seed, and requires identical predictions; the frozen embedding must not
// have moved.
func TestSaveLoadAndFreeze(t *testing.T) {
	c := DefaultSmoke()
	tokens, labels := separable(c)
	pre := make([]float32, c.Vocab*8)
	for i := range pre {
		pre[i] = float32(i%7) / 7
	}
	cfg := BiLSTMConfig{Vocab: int64(c.Vocab), EmbedDim: 8, Hidden: 8, Layers: 1, Classes: 2, LR: 0.02, Pretrained: pre, Freeze: true}
	path := filepath.Join(t.TempDir(), "model.ot")
	idx := make([]int, 64)
	for i := range idx {
		idx[i] = i
	}
	var before []float32
	scores := func(m *BiLSTM, b *Batch) ([]float32, error) {
		l, err := m.logits(b, false)
		if err != nil {
			return nil, err
		}
		defer l.Drop()
		out := make([]float32, 2*len(b.Lengths))
		return out, l.CopyData(out, uint(len(out)))
	}
	err := torchrt.Do(func() error {
		torchrt.ManualSeed(1)
		m, err := NewBiLSTM(cfg, gotch.CPU)
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
		emb := make([]float32, len(pre))
		if err := m.embed.weight.CopyData(emb, uint(len(emb))); err != nil {
			return err
		}
		if !slices.Equal(emb, pre) {
			t.Error("frozen embedding changed during training")
		}
		if before, err = scores(m, b); err != nil {
			return err
		}
		return m.Save(path)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = torchrt.Do(func() error {
		torchrt.ManualSeed(99)
		m, err := NewBiLSTM(cfg, gotch.CPU)
		if err != nil {
			return err
		}
		defer m.Close()
		if err := m.Load(path); err != nil {
			return err
		}
		b, err := NewBatch(tokens, nil, idx, 0, 0, gotch.CPU)
		if err != nil {
			return err
		}
		defer b.Drop()
		after, err := scores(m, b)
		if err != nil {
			return err
		}
		if !slices.Equal(before, after) {
			t.Error("loaded model scores differently from the saved one")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewBiLSTM(BiLSTMConfig{Vocab: 3, EmbedDim: 2, Hidden: 2, Layers: 1, Classes: 2, LR: 1, Freeze: true}, gotch.CPU); err == nil {
		t.Error("freeze without pretrained vectors accepted")
	}
}

// TestSaveOnFullDisk: saving a model's optimizer state where the disk is
// full (/dev/full) returns an error naming the file, with no partial file
// kept; libtorch's own writer threw from a destructor there and the whole
// process ended ("terminate called after throwing an instance of
// c10::Error"), losing the run.
func TestSaveOnFullDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	c := DefaultSmoke()
	cfg := BiLSTMConfig{Vocab: int64(c.Vocab), EmbedDim: 8, Hidden: 8, Layers: 1, Classes: 2, LR: 0.02}
	err := torchrt.Do(func() error {
		m, err := NewBiLSTM(cfg, gotch.CPU)
		if err != nil {
			return err
		}
		defer m.Close()
		return m.SaveOptimizer("/dev/full")
	})
	if err == nil || !strings.Contains(err.Error(), "/dev/full") || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("saving the optimizer onto a full disk: %v, want an error naming the file", err)
	}
	good := filepath.Join(t.TempDir(), "optimizer.pt")
	if err := torchrt.Do(func() error {
		m, err := NewBiLSTM(cfg, gotch.CPU)
		if err != nil {
			return err
		}
		defer m.Close()
		if err := m.SaveOptimizer(good); err != nil {
			return err
		}
		return m.LoadOptimizer(good)
	}); err != nil {
		t.Errorf("save and load where there is room: %v", err)
	}
}
