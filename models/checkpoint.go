package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/metrics"
)

// A checkpoint is everything Train needs to go on after an epoch, or
// after a step within one, exactly as if it had not stopped: the model's
// weights, the optimizer's state (with a schedule's position), libtorch's
// generator state (dropout draws), the best epoch's weights and the
// history, and within an epoch the steps taken and the sum of their
// losses. The batch order needs nothing: it is a function of the seed and
// the epoch (Buckets).
//
// Layout under the checkpoint folder: epoch-N/ holds the files after
// epoch N, epoch-N-step-K/ those after step K of epoch N; "latest" names
// the last whole one and is replaced atomically after it is written, so a
// process killed at any moment leaves a usable checkpoint or none.
type checkpoint struct {
	Epoch     int                    `json:"epoch"` // the last whole epoch
	Epochs    []metrics.Epoch        `json:"epochs"`
	BestEpoch int                    `json:"best_epoch"`
	BestAcc   float64                `json:"best_accuracy"`
	Since     int                    `json:"since_best"`
	Valid     metrics.Classification `json:"valid"`
	// Partial, when its Steps are > 0, is how far the next epoch had gone
	// when the state was kept within it (TrainOptions.CheckpointEvery).
	Partial partial `json:"partial,omitzero"`
}

// partial is an epoch's progress within it: the steps taken (of its
// batches in Buckets' order), the sum of their losses and the seconds
// they took.
type partial struct {
	Steps   int     `json:"steps"`
	LossSum float64 `json:"loss_sum"`
	Seconds float64 `json:"seconds"`
}

const latestName = "latest"

// saveCheckpoint writes the state after epoch ck.Epoch (and, within the
// next, ck.Partial's steps) into dir; best is the best epoch's weights
// file (none before the first epoch ends).
func saveCheckpoint(dir string, m Classifier, dev gotch.Device, ck checkpoint, best string) error {
	name := "epoch-" + strconv.Itoa(ck.Epoch)
	if ck.Partial.Steps > 0 {
		name = fmt.Sprintf("epoch-%d-step-%d", ck.Epoch+1, ck.Partial.Steps)
	}
	sub := filepath.Join(dir, name)
	if err := os.RemoveAll(sub); err != nil {
		return err
	}
	if err := os.MkdirAll(sub, 0o777); err != nil {
		return err
	}
	if err := m.Save(filepath.Join(sub, "model.ot")); err != nil {
		return err
	}
	if err := m.SaveOptimizer(filepath.Join(sub, "optimizer.pt")); err != nil {
		return fmt.Errorf("optimizer state: %w", err)
	}
	if err := saveRNG(filepath.Join(sub, "rng.bin"), dev); err != nil {
		return err
	}
	if ck.BestEpoch > 0 {
		b, err := xio.ReadFileMax(best, xio.MaxCache)
		if err != nil {
			return err
		}
		if err := xio.WriteFileAtomic(filepath.Join(sub, "best.ot"), b); err != nil {
			return err
		}
	}
	js, err := json.MarshalIndent(ck, "", "  ")
	if err != nil {
		return err
	}
	if err := xio.WriteFileAtomic(filepath.Join(sub, "state.json"), js); err != nil {
		return err
	}
	if err := xio.WriteFileAtomic(filepath.Join(dir, latestName), []byte(name+"\n")); err != nil {
		return err
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "epoch-") && e.Name() != name {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

// epochName is a checkpoint's folder name: epoch-N after epoch N,
// epoch-N-step-K within epoch N after its step K.
var epochName = regexp.MustCompile(`^epoch-[0-9]{1,9}(-step-[0-9]{1,9})?$`)

// loadCheckpoint restores the last checkpoint of dir into m and
// libtorch's generator, writes the best weights to best, and returns the
// state; ok is false when dir holds none.
func loadCheckpoint(dir string, m Classifier, dev gotch.Device, best string) (ck checkpoint, ok bool, err error) {
	name, err := xio.ReadFileMax(filepath.Join(dir, latestName), 256)
	if errors.Is(err, fs.ErrNotExist) {
		return ck, false, nil
	}
	if err != nil {
		return ck, false, err
	}
	epoch := strings.TrimSpace(string(name))
	if !epochName.MatchString(epoch) {
		return ck, false, fmt.Errorf("%s: names %q, not a checkpoint of this folder (epoch-N or epoch-N-step-K)", filepath.Join(dir, latestName), epoch)
	}
	sub := filepath.Join(dir, epoch)
	for _, f := range []string{"model.ot", "optimizer.pt"} {
		if _, err := xio.Regular(filepath.Join(sub, f)); err != nil {
			return ck, false, err
		}
	}
	js, err := xio.ReadFileMax(filepath.Join(sub, "state.json"), xio.MaxRecord)
	if err != nil {
		return ck, false, err
	}
	if err := json.Unmarshal(js, &ck); err != nil {
		return ck, false, fmt.Errorf("%s: %w", filepath.Join(sub, "state.json"), err)
	}
	if err := m.Load(filepath.Join(sub, "model.ot")); err != nil {
		return ck, false, err
	}
	if err := m.LoadOptimizer(filepath.Join(sub, "optimizer.pt")); err != nil {
		return ck, false, fmt.Errorf("optimizer state: %w", err)
	}
	if err := loadRNG(filepath.Join(sub, "rng.bin"), dev); err != nil {
		return ck, false, err
	}
	if ck.Partial.Steps < 0 || ck.Epoch < 0 {
		return ck, false, fmt.Errorf("%s: epoch %d, %d steps into the next", filepath.Join(sub, "state.json"), ck.Epoch, ck.Partial.Steps)
	}
	if ck.BestEpoch > 0 { // none before the first epoch ends
		b, err := xio.ReadFileMax(filepath.Join(sub, "best.ot"), xio.MaxCache)
		if err != nil {
			return ck, false, err
		}
		if err := xio.WriteFileAtomic(best, b); err != nil {
			return ck, false, err
		}
	}
	return ck, true, nil
}

// saveRNG writes the state of the generator dropout draws from: the
// device's (a GPU's own generator, or the CPU's).
func saveRNG(path string, dev gotch.Device) error {
	st, err := ts.XpRNGState(dev)
	if err != nil {
		return fmt.Errorf("generator state: %w", err)
	}
	defer st.MustDrop()
	b, ok := st.Vals().([]uint8)
	if !ok {
		return fmt.Errorf("generator state: %s tensor, want bytes", st.DType())
	}
	return xio.WriteFileAtomic(path, b)
}

func loadRNG(path string, dev gotch.Device) error {
	b, err := xio.ReadFileMax(path, 1<<20)
	if err != nil {
		return err
	}
	st, err := ts.OfSlice(b)
	if err != nil {
		return fmt.Errorf("generator state: %w", err)
	}
	defer st.MustDrop()
	if err := ts.XpSetRNGState(dev, st); err != nil {
		return fmt.Errorf("generator state: %w", err)
	}
	return nil
}

// saveVars writes a model's parameters to path in the format
// nn.VarStore.Save writes (Load reads it), serialized in memory and
// written through a temporary file beside path: a failed write leaves
// what was there, where libtorch's own writer ended the process (it
// throws from a destructor on a full disk).
func saveVars(vs *nn.VarStore, path string) error {
	b, err := vs.XpBytes()
	if err != nil {
		return err
	}
	return xio.WriteFileAtomic(path, b)
}

// saveOptimizer writes an optimizer's state to path the same way.
func saveOptimizer(opt *nn.Optimizer, path string) error {
	b, err := opt.XpState()
	if err != nil {
		return fmt.Errorf("optimizer state: %w", err)
	}
	return xio.WriteFileAtomic(path, b)
}
