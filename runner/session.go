package runner

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/torchrt"
)

// Session holds what the cells of one config share in one process: the
// config with its device resolved, the loaded inputs, the device and,
// once a cell privatizes, the mechanisms' candidate space. `xp run` runs
// cells through it; `xp privatize` asks it for one cell's split.
type Session struct {
	c     *experiments.Config // the caller's config, cloned, device resolved
	in    *inputs
	dev   gotch.Device
	space *mech.Space
	// Log receives one line per event, Progress progress bars (drawn on
	// terminals only); either may be nil.
	log, progress io.Writer
	// loaded is how long loading the inputs took (seconds): a dry run's
	// estimate adds it (Estimate.Load), since the run loads them again.
	loaded float64
	// readOnly: the session writes nothing (SessionOptions.ReadOnly).
	readOnly bool
	// rates are the speeds this host measured: cells write them, a dry
	// run's estimate prices with them.
	rates *rateBook
}

// SessionOptions tune Open without changing any result.
type SessionOptions struct {
	Log, Progress io.Writer
	// ReadOnly only plans (a dry run, or a cluster submission from a login
	// node): nothing is written to the cache (its entries are read), and a
	// CUDA device that this machine lacks is accepted (keys name only the device's kind; no
	// tensor is made).
	ReadOnly bool
}

// Open resolves the config's device (in a copy: c is not changed),
// checks that the cache folder is writable, removes temporaries that
// processes which are gone left in it, and loads the inputs every cell
// reads.
func Open(ctx context.Context, c *experiments.Config, opt SessionOptions) (*Session, error) {
	c = c.Clone()
	dev, err := torchrt.ParseDevice(c.Device)
	switch {
	case err == nil:
		c.Device = torchrt.DeviceString(dev) // auto resolved before any key is computed
	case opt.ReadOnly && strings.HasPrefix(strings.TrimSpace(c.Device), "cuda"):
		dev = gotch.CPU // keys only: they hold the kind, cuda
	default:
		return nil, c.ErrAt(err.Error(), "device")
	}
	if !opt.ReadOnly {
		if err := ownCache(c); err != nil {
			return nil, err
		}
		if err := xio.CheckWritable("cache", c.Cache); err != nil {
			return nil, c.ErrAt(err.Error(), "cache")
		}
		for _, sub := range []string{"corpora", "mech", "embeddings", modelsDir, drawsDir, "tmp"} {
			if _, err := xio.CleanTemps(filepath.Join(c.Cache, sub)); err != nil {
				return nil, fmt.Errorf("cache: %w", err)
			}
		}
	}
	start := time.Now()
	in, err := load(ctx, c, opt.ReadOnly, opt.Log, opt.Progress)
	if err != nil {
		return nil, err
	}
	s := &Session{c: c, in: in, dev: dev, log: opt.Log, progress: opt.Progress, loaded: time.Since(start).Seconds(), readOnly: opt.ReadOnly}
	s.rates = &rateBook{c: c, emb: in.mech, dev: dev, logf: s.logf}
	return s, nil
}

// Close frees the candidate space.
func (s *Session) Close() {
	if s.space != nil {
		s.space.Close()
		s.space = nil
	}
}

// Inputs are the checksums of the data and vectors every cell reads.
func (s *Session) Inputs() experiments.Inputs { return s.in.sums }

// Labels are the dataset's label names (Split.Labels index them).
func (s *Session) Labels() []string {
	if s.in.dataset == nil {
		return nil
	}
	return s.in.dataset.Labels
}

// Key is the cell's record key.
func (s *Session) Key(cell experiments.Cell) string { return s.c.Key(cell, s.sums(cell)) }

// sums are the checksums that key cell: those of its view of the data,
// and, for an analysis cell whose mechanism reads the task vocabulary in a
// run that also has utility cells, the task's data too (the mechanism's
// vocabulary is the task's, the one its utility cells use: see
// mechanism).
func (s *Session) sums(cell experiments.Cell) experiments.Inputs {
	v := s.in.view(cell)
	sums := v.sums
	if v != s.in && cell.ReadsTask() {
		sums.Data = v.sums.Data + "+" + s.in.sums.Data
	}
	return sums
}

func (s *Session) logf(format string, args ...any) {
	if s.log != nil {
		fmt.Fprintf(s.log, format+"\n", args...)
	}
}

// candidates returns the session's candidate space, indexing the vectors
// on first use.
func (s *Session) candidates() (*mech.Space, error) {
	if s.space == nil {
		sp, err := mech.NewSpace(s.in.mech, s.dev, 0)
		if err != nil {
			return nil, err
		}
		sp.CacheDir, sp.KeepCache = filepath.Join(s.c.Cache, "mech"), s.readOnly
		s.space = sp
	}
	return s.space, nil
}

// mechanism builds the cell's mechanism over the session's space. Its
// task vocabulary (CusText's inputs, SanText's candidates, SanText+'s
// sensitive words) is the run's task's, for analysis cells too: in a run
// with utility cells that is every split they read, so that an analysis
// measures the mechanism the utility cells apply; in an analysis-only run,
// the analysis's view of the data. A costly structure it computes rather
// than reads from the cache (CusText's mapping) has its time returned
// (built; 0 otherwise) and noted for estimates.
func (s *Session) mechanism(cell experiments.Cell, progress io.Writer) (m mech.Mechanism, built float64, err error) {
	if _, err := s.candidates(); err != nil {
		return nil, 0, err
	}
	prebuilt := mech.Prebuilt(s.space, cell.Mechanism, cell.Params, s.in.counts)
	start := time.Now()
	m, err = mech.New(cell.Mechanism, s.space, cell.Epsilon, cell.Params, mech.Options{Counts: s.in.counts, Progress: progress})
	if err == nil && !prebuilt {
		if built = time.Since(start).Seconds(); built > 0 {
			for _, k := range s.rates.constructKeys(cell) {
				s.rates.note(k, rate{PerSec: 1 / built})
			}
		}
	}
	return m, built, err
}
