package models

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/internal/filelimit"
	"github.com/xp-nlp/xp/internal/xio"
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

// TestSaveOnFullDisk: saving a model or its optimizer's state where the
// disk refuses the bytes returns one line naming the file, and what the
// file held before is still there whole, with no temporary beside it.
// libtorch's own writer threw from a destructor there and the whole
// process ended ("terminate called after throwing an instance of
// c10::Error"); the writer that replaced it removed its target after a
// failed write, which deleted /dev/full when the test wrote onto it as
// root. The disk is full here by a file-size limit on a child process
// (internal/filelimit), in a folder of the test's own.
func TestSaveOnFullDisk(t *testing.T) {
	if !filelimit.Child(t, 4096) {
		return
	}
	c := DefaultSmoke()
	cfg := BiLSTMConfig{Vocab: int64(c.Vocab), EmbedDim: 8, Hidden: 8, Layers: 1, Classes: 2, LR: 0.02}
	dir := t.TempDir()
	for _, name := range []string{"optimizer.pt", "model.ot"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("earlier"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := torchrt.Do(func() error {
			m, err := NewBiLSTM(cfg, gotch.CPU)
			if err != nil {
				return err
			}
			defer m.Close()
			if name == "model.ot" {
				return m.Save(path)
			}
			return m.SaveOptimizer(path)
		})
		t.Log(err)
		if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
			t.Errorf("saving %s past the disk's room: %v, want one line naming the file", name, err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != "earlier" {
			t.Errorf("%s after the failed save: %q, %v; want what it held before", name, b, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d files left, want the 2 earlier ones (no temporaries)", len(ents))
	}
}

// TestSaveOntoDevice: a save whose target is not a regular file (a device
// such as /dev/full, here a FIFO of the test's own) is refused before a
// byte is written and leaves the target as it was.
func TestSaveOntoDevice(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	c := DefaultSmoke()
	cfg := BiLSTMConfig{Vocab: int64(c.Vocab), EmbedDim: 8, Hidden: 8, Layers: 1, Classes: 2, LR: 0.02}
	err := torchrt.Do(func() error {
		m, err := NewBiLSTM(cfg, gotch.CPU)
		if err != nil {
			return err
		}
		defer m.Close()
		return errors.Join(m.SaveOptimizer(fifo), m.Save(fifo))
	})
	var nr *xio.NotRegular
	if !errors.As(err, &nr) {
		t.Errorf("saving onto a FIFO: %v, want a refusal", err)
	}
	if info, err := os.Lstat(fifo); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO after the refused saves: %v, %v", info, err)
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
