package models

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/torchrt"
)

// trainStopped trains m as Train does, cancelled after epoch stopAfter
// (0: never), as a preempted job is, then scores valid with the weights
// Train left.
func trainStopped(m Classifier, train, valid Data, opt TrainOptions, stopAfter int) (TrainResult, metrics.Classification, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt.OnEpoch = func(e metrics.Epoch) {
		if e.Epoch == stopAfter {
			cancel()
		}
	}
	res, err := Train(ctx, m, train, valid, opt)
	if err != nil {
		return res, metrics.Classification{}, err
	}
	after, err := Evaluate(m, valid, opt)
	return res, after, err
}

// TestTrainResumesExactly stops training after epoch 2 of 5 (as a
// preempted job would), then trains a fresh model from the checkpoint:
// history, best epoch and final scores must equal an uninterrupted run's
// bit for bit. The model has dropout, so this also checks that the
// generator's state is restored, and Adam's moments (resuming with fresh
// moments, or a fresh generator, changes the losses of epoch 3: checked).
func TestTrainResumesExactly(t *testing.T) {
	train, valid := smokeData(t)
	run := func(ck string, stopAfter int) (res TrainResult, after metrics.Classification, err error) {
		err = torchrt.Do(func() error {
			torchrt.ManualSeed(7)
			m, err := NewBiLSTM(BiLSTMConfig{Vocab: 20, EmbedDim: 16, Hidden: 16, Layers: 1, Classes: 2, Dropout: 0.5, LR: 0.01, ClipNorm: 5}, gotch.CPU)
			if err != nil {
				return err
			}
			defer m.Close()
			res, after, err = trainStopped(m, train, valid, TrainOptions{Epochs: 5, Batch: 32, Classes: 2, Seed: 3, Device: gotch.CPU, Dir: t.TempDir(), Checkpoint: ck}, stopAfter)
			return err
		})
		return res, after, err
	}
	whole, wholeAfter, err := run("", 0)
	if err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(t.TempDir(), "ck")
	if _, _, err := run(ck, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ck, "epoch-2", "optimizer.pt")); err != nil {
		t.Fatalf("no checkpoint after epoch 2: %v", err)
	}
	resumed, resumedAfter, err := run(ck, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(resumed.Epochs) != 5 {
		t.Fatalf("resumed history has %d epochs", len(resumed.Epochs))
	}
	for i := range whole.Epochs {
		w, r := whole.Epochs[i], resumed.Epochs[i]
		if w.Loss != r.Loss || !reflect.DeepEqual(w.Valid, r.Valid) {
			t.Errorf("epoch %d: loss %v valid %+v uninterrupted, %v %+v resumed", i+1, w.Loss, w.Valid, r.Loss, r.Valid)
		}
	}
	if whole.BestEpoch != resumed.BestEpoch || !reflect.DeepEqual(wholeAfter, resumedAfter) {
		t.Errorf("best epoch %d → %+v uninterrupted, %d → %+v resumed", whole.BestEpoch, wholeAfter, resumed.BestEpoch, resumedAfter)
	}
}

// TestCheckpointNameConfined: the checkpoint folder's pointer to its last
// checkpoint names a folder of its own (epoch-N) or it is refused: one
// that names a path elsewhere is not followed.
func TestCheckpointNameConfined(t *testing.T) {
	for _, name := range []string{"../../etc", "/etc", "epoch-1/../../x", "", "epoch-"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, latestName), []byte(name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := loadCheckpoint(dir, nil, gotch.CPU, filepath.Join(t.TempDir(), "best.ot")); ok || err == nil || !strings.Contains(err.Error(), "not a checkpoint of this folder") {
			t.Errorf("latest naming %q: ok %v, %v", name, ok, err)
		}
	}
}
