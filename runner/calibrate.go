package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/models"
	"github.com/xp-nlp/xp/results"
)

// Calibration bounds: a dry run that finds no rate recorded on this host
// for a privatization or a training measures one on a sample of this
// size, with the run's own code, so that the first dry run on a machine
// still gives an estimate. The sample is small (a few seconds on 2
// cores), so the rate is rough: it includes a start-up cost that a whole
// split amortises, which makes it an overestimate of the time.
const (
	calibrationTokens  = 3000 // privatized tokens at most
	calibrationBatches = 2    // training batches of the config's size
)

// calibration is a rate a dry run measured itself, and on what.
type calibration struct {
	key, on string
	rate    rate
	seconds float64
}

// calibrate measures, for the todo cells, the privatization and training
// rates that rates lacks (own or borrowed), each once, on a sample; it
// returns them to be used for this estimate only (a dry run writes
// nothing). A mechanism whose construction is itself costly and not yet
// cached (CusText's mapping) is not built for a sample: it stays
// unpriced.
func (x *estimator) calibrate(ctx context.Context, rates map[string]rate, cells []experiments.Cell, threads int) []calibration {
	s := x.s
	var out []calibration
	done := map[string]bool{}
	// Whether a mechanism's costly structure is cached reads the cache
	// only (a dry run's session has built no index).
	space := &mech.Space{Emb: s.in.mech, CacheDir: filepath.Join(s.c.Cache, "mech"), KeepCache: true}
	known := func(key string, borrowed []string) bool {
		if done[key] {
			return true
		}
		for _, k := range append([]string{key}, borrowed...) {
			if r, ok := rates[k]; ok && r.PerSec > 0 {
				return true
			}
		}
		return false
	}
	for _, cell := range cells {
		if ctx.Err() != nil {
			return out
		}
		if cell.Analysis != "" {
			continue
		}
		priv, train := s.rates.keys(cell, threads)
		if cell.Mode != "none" && priv != "" && !known(priv, s.rates.sameSearch(cell, false)) && mech.Prebuilt(space, cell.Mechanism, cell.Params, s.in.counts) {
			done[priv] = true
			if c, err := x.calibratePrivatize(ctx, cell, priv); err == nil {
				out = append(out, c)
			} else {
				s.logf("calibration of %s: %v", priv, err)
			}
		}
		if trains(cell) && !known(train, nil) {
			done[train] = true
			if c, err := x.calibrateTrain(ctx, cell, train); err == nil {
				out = append(out, c)
			} else {
				s.logf("calibration of %s: %v", train, err)
			}
		}
	}
	return out
}

// trains reports whether the cell trains a model (a test-mode cell
// evaluates its seed's clean one, which the baseline trains).
func trains(cell experiments.Cell) bool {
	return cell.Analysis == "" && (cell.Mode == "none" || cell.Privatizes("train"))
}

// calibratePrivatize privatizes the first calibrationTokens tokens of
// the training split with the cell's mechanism (noise from a stream of
// its own: nothing a run draws) and times it.
func (x *estimator) calibratePrivatize(ctx context.Context, cell experiments.Cell, key string) (calibration, error) {
	s := x.s
	m, _, err := s.priv.mechanism(cell, nil)
	if err != nil {
		return calibration{}, err
	}
	// A tenth of the sample first: a slow mechanism (TEM privatized 1,000
	// tokens a second) is priced from it alone.
	var c calibration
	for _, want := range []int64{calibrationTokens / 10, calibrationTokens} {
		var docs [][]string
		var n int64
		for _, d := range s.in.splits["train"].Docs {
			if n >= want {
				break
			}
			docs = append(docs, d)
			n += int64(len(d))
		}
		if n == 0 {
			return calibration{}, fmt.Errorf("no training tokens")
		}
		start := time.Now()
		if _, _, err := m.Privatize(ctx, docs, mech.Source{Seed: cell.Seed, Cell: "calibration", Split: "train"}); err != nil {
			return calibration{}, err
		}
		secs := time.Since(start).Seconds()
		c = calibration{key: key, on: fmt.Sprintf("%d tokens", n), rate: rate{PerSec: float64(n) / max(secs, 1e-9)}, seconds: c.seconds + secs}
		if secs > calibrationSmall {
			break
		}
	}
	return c, nil
}

// calibrationSmall is the time the first, small privatization sample may
// take for the larger one to follow (seconds).
const calibrationSmall = 0.05

// calibrateTrain trains the config's model for one epoch on
// calibrationBatches batches of the training split, taken evenly over it
// (their lengths as the split's), and reads the epoch's examples per
// second.
func (x *estimator) calibrateTrain(ctx context.Context, cell experiments.Cell, key string) (calibration, error) {
	s := x.s
	orig, valid := s.in.splits["train"], s.in.splits["valid"]
	want := min(len(orig.Docs), calibrationBatches*max(1, s.c.TrainAt(cell).Batch))
	if want == 0 {
		return calibration{}, fmt.Errorf("no training examples")
	}
	pick := func(sp Split, n int) Split {
		step := max(1, len(sp.Docs)/max(1, n))
		var docs, docs2 [][]string
		out := Split{}
		for i := 0; i < len(sp.Docs) && len(docs) < n; i += step {
			docs = append(docs, sp.Docs[i])
			if sp.Docs2 != nil {
				docs2 = append(docs2, sp.Docs2[i])
			}
			out.Labels = append(out.Labels, sp.Labels[i])
			if i < len(sp.IDs) {
				out.IDs = append(out.IDs, sp.IDs[i])
			}
		}
		out.Docs, out.Docs2 = docs, docs2
		return out
	}
	splits := map[string]Split{"train": pick(orig, want), "valid": pick(valid, min(len(valid.Docs), 8))}
	t := &trained{Coverage: map[string]results.Coverage{}}
	data, err := s.models.trainingData(cell, splits, t)
	if err != nil {
		return calibration{}, err
	}
	train, val := data["train"], data["valid"]
	t.Steps = max(t.Steps, 1)
	model, err := s.models.openModel(cell, t, "")
	if err != nil {
		return calibration{}, err
	}
	defer model.Close()
	dir, err := os.MkdirTemp("", "xp-calibrate-")
	if err != nil {
		return calibration{}, err
	}
	defer os.RemoveAll(dir)
	opt := s.models.trainOptions(cell)
	opt.Epochs, opt.Dir = 1, dir
	start := time.Now()
	res, err := models.Train(ctx, model, train, val, opt)
	if err != nil {
		return calibration{}, err
	}
	secs := time.Since(start).Seconds()
	if len(res.Epochs) == 0 || res.Epochs[0].ExamplesPerSec <= 0 {
		return calibration{}, fmt.Errorf("no epoch timed")
	}
	return calibration{key: key, on: fmt.Sprintf("%d examples", train.Len()), rate: rate{PerSec: res.Epochs[0].ExamplesPerSec}, seconds: secs}, nil
}
