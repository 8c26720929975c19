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
	"github.com/xp-nlp/xp/torchrt"
)

// Session holds what the cells of one config share in one process: the
// config with its device resolved, the loaded inputs, the device and,
// once a cell privatizes, the mechanisms' candidate space. `xp run` runs
// cells through it; `xp privatize` asks it for one cell's split.
type Session struct {
	c   *experiments.Config // the caller's config, cloned, device resolved
	in  *inputs
	dev gotch.Device
	// elsewhere is the config's device where this host has not got it
	// (a read-only session planning a GPU run on a CPU-only host: dev is
	// then the CPU, for keys only), "" otherwise. Rates name the config's
	// device, and nothing is measured here to price its work.
	elsewhere string
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
	// models trains and opens the cells' classifiers; priv builds the
	// mechanisms and privatizes the cells' splits through the corpus
	// cache.
	models *trainer
	priv   *privatizer
	// an computes analysis cells and privacy measures.
	an *analyzer
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
	rateDev, elsewhere := dev, ""
	switch {
	case err == nil:
		c.Device = torchrt.DeviceString(dev) // auto resolved before any key is computed
	case opt.ReadOnly && strings.HasPrefix(strings.TrimSpace(c.Device), "cuda"):
		dev = gotch.CPU // keys only: they hold the kind, cuda
		rateDev, elsewhere = gpuKind, strings.TrimSpace(c.Device)
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
	s := &Session{c: c, in: in, dev: dev, elsewhere: elsewhere, log: opt.Log, progress: opt.Progress, loaded: time.Since(start).Seconds(), readOnly: opt.ReadOnly}
	s.rates = &rateBook{c: c, emb: in.mech, dev: rateDev, logf: s.logf}
	s.models = &trainer{c: c, in: in, dev: dev, logf: s.logf}
	s.priv = &privatizer{c: c, in: in, dev: dev, readOnly: opt.ReadOnly, rates: s.rates, logf: s.logf}
	s.an = &analyzer{c: c, in: in, dev: dev, priv: s.priv, sums: s.sums, logf: s.logf}
	return s, nil
}

// Close frees the candidate space.
func (s *Session) Close() {
	if s.priv.space != nil {
		s.priv.space.Close()
		s.priv.space = nil
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

// Split privatizes one split of the cell (see privatizer.Split).
func (s *Session) Split(ctx context.Context, cell experiments.Cell, split string, progress io.Writer) (Privatized, error) {
	return s.priv.Split(ctx, cell, split, progress)
}
