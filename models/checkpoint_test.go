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
	"github.com/sugarme/gotch/ts"

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

// trainStoppedAtStep is trainStopped cancelled after the stopAt-th step
// in all (0: never), within an epoch.
func trainStoppedAtStep(m Classifier, train, valid Data, opt TrainOptions, stopAt int) (TrainResult, metrics.Classification, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := Train(ctx, &stepStopper{Classifier: m, stopAt: stopAt, cancel: cancel}, train, valid, opt)
	if err != nil {
		return res, metrics.Classification{}, err
	}
	after, err := Evaluate(m, valid, opt)
	return res, after, err
}

// sameTraining fails t where a resumed training's history (losses and
// validation scores), best epoch or final scores differ from an
// uninterrupted one's.
func sameTraining(t *testing.T, whole, resumed TrainResult, wholeAfter, resumedAfter metrics.Classification) {
	t.Helper()
	if len(resumed.Epochs) != len(whole.Epochs) {
		t.Fatalf("resumed history has %d epochs, uninterrupted %d", len(resumed.Epochs), len(whole.Epochs))
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
	sameTraining(t, whole, resumed, wholeAfter, resumedAfter)
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

// stepStopper is a classifier that cancels its context after its
// stopAt-th step (counting Step and StepLoss alike), as a job preempted
// mid-epoch is.
type stepStopper struct {
	Classifier
	steps, stopAt int
	cancel        func()
}

func (s *stepStopper) count() {
	if s.steps++; s.steps == s.stopAt {
		s.cancel()
	}
}

func (s *stepStopper) Step(b *Batch) (float64, error) {
	defer s.count()
	return s.Classifier.Step(b)
}

func (s *stepStopper) StepLoss(b *Batch) (*ts.Tensor, error) {
	defer s.count()
	return s.Classifier.(lossStepper).StepLoss(b)
}

// TestTrainResumesMidEpoch: training keeps its state within an epoch
// too (every 4 steps here; TrainOptions.CheckpointEvery in a run), and a
// run stopped between two of those resumes from the last one to end, bit
// for bit, as an uninterrupted run does: history, best epoch, scores.
// With one epoch — the papers' fine-tuning — a stop lost everything
// before; in the first epoch no best weights exist yet. The losses read
// a step late (as on a GPU) are all in the state kept.
func TestTrainResumesMidEpoch(t *testing.T) {
	train, valid := smokeData(t) // 16 batches an epoch
	for _, tc := range []struct {
		name          string
		epochs, stop  int // stop after this many steps in all
		lagged        bool
		wantKept      string
		wantResumedAt string
		wantLogged    string // after resuming
	}{
		{"one epoch", 1, 11, false, "epoch-1-step-8", "resuming epoch 1 after step 8", "epoch 1: step 12 of 16, state kept"},
		{"third epoch", 3, 16 + 16 + 6, false, "epoch-3-step-4", "resuming epoch 3 after step 4", "epoch 3: step 8 of 16, state kept"},
		{"lagged loss", 2, 16 + 15, true, "epoch-2-step-12", "resuming epoch 2 after step 12", "epoch 2: loss"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(ck string, stopAt int) (res TrainResult, after metrics.Classification, log string, err error) {
				var out strings.Builder
				err = torchrt.Do(func() error {
					torchrt.ManualSeed(7)
					m, err := NewBiLSTM(BiLSTMConfig{Vocab: 20, EmbedDim: 16, Hidden: 16, Layers: 1, Classes: 2, Dropout: 0.5, LR: 0.01, ClipNorm: 5}, gotch.CPU)
					if err != nil {
						return err
					}
					defer m.Close()
					res, after, err = trainStoppedAtStep(m, train, valid, TrainOptions{Epochs: tc.epochs, Batch: 32, Classes: 2, Seed: 3, Device: gotch.CPU, Dir: t.TempDir(), Checkpoint: ck, checkpointSteps: 4, lagLoss: tc.lagged, Log: &out}, stopAt)
					return err
				})
				return res, after, out.String(), err
			}
			whole, wholeAfter, _, err := run("", 0)
			if err != nil {
				t.Fatal(err)
			}
			ck := filepath.Join(t.TempDir(), "ck")
			if _, _, _, err := run(ck, tc.stop); !errors.Is(err, context.Canceled) {
				t.Fatalf("stopped run: %v", err)
			}
			if latest, err := os.ReadFile(filepath.Join(ck, latestName)); err != nil || strings.TrimSpace(string(latest)) != tc.wantKept {
				t.Fatalf("kept %q (%v), want %s", latest, err, tc.wantKept)
			}
			resumed, resumedAfter, log, err := run(ck, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(log, tc.wantResumedAt) || !strings.Contains(log, tc.wantLogged) {
				t.Errorf("log %q, want %q and %q", log, tc.wantResumedAt, tc.wantLogged)
			}
			sameTraining(t, whole, resumed, wholeAfter, resumedAfter)
		})
	}
}
