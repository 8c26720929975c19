package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/sugarme/gotch"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/metrics"
)

// Privatized is a split as a cell sees it.
type Privatized struct {
	Split
	// Original is the split's original tokens (the same as Split where the
	// cell does not privatize it).
	Original Split
	// Report describes the privatization; nil when the cell does not
	// privatize this split (the original tokens).
	Report *metrics.Privatization
	// Seconds is the privatization's time; 0 when served from the cache.
	Seconds float64
}

// Split returns split ("train", "valid" or "test") as the cell trains or
// is tested on it: the original tokens where the cell does not privatize
// it, otherwise the mechanism's output — from the corpus cache when a
// whole, verified entry is there, else privatized (the cell's mechanism,
// ε, parameters, seed and the split name determine every random draw)
// and cached. This is the one place a split is privatized: `xp run` and
// `xp privatize` both call it.
func (s *privatizer) Split(ctx context.Context, cell experiments.Cell, split string, progress io.Writer) (Privatized, error) {
	orig, ok := s.in.splits[split]
	if !ok {
		return Privatized{}, fmt.Errorf("no split %q (want train, valid or test)", split)
	}
	if !cell.Privatizes(role(split)) {
		return Privatized{Split: orig, Original: orig}, nil
	}
	key := s.c.CorpusKey(cell, split, s.in.sums)
	path := s.corpusPath(key)
	cf, err := readCorpus(path, key, len(orig.Docs))
	switch {
	case err == nil:
		s.countTypes(orig, &cf)
		return Privatized{Split: orig.with(cf.Docs, cf.Docs2), Original: orig, Report: &cf.Report}, nil
	case !errors.Is(err, fs.ErrNotExist):
		s.logf("corpus cache %s: %v: privatizing %s again", path, err, split)
	}
	cells := append([]experiments.Cell{cell}, s.splitSharers(cell, split)...)
	ms := make([]mech.Mechanism, len(cells))
	for i, c := range cells {
		w := progress
		if i > 0 {
			w = nil
		}
		if ms[i], _, err = s.mechanism(c, w); err != nil {
			return Privatized{}, err
		}
	}
	docs := append(append([][]string{}, orig.Docs...), orig.Docs2...) // pairs: both texts, one stream each
	src := mech.Source{Seed: cell.Seed, Cell: s.c.SourceStream(cell), Split: split}
	start := time.Now()
	var outs [][][]string
	var reps []metrics.Privatization
	if len(ms) == 1 {
		out, rep, err := ms[0].Privatize(ctx, docs, src)
		outs, reps = [][][]string{out}, []metrics.Privatization{rep}
		if err != nil {
			return Privatized{}, fmt.Errorf("privatize %s: %w", split, err)
		}
	} else if outs, reps, err = mech.SharedPrivatize(ctx, ms, docs, src); err != nil {
		return Privatized{}, fmt.Errorf("privatize %s (with %d settings that draw its noise: common_noise): %w", split, len(ms)-1, err)
	}
	secs := time.Since(start).Seconds()
	for i := len(cells) - 1; i >= 0; i-- { // the cell's own last: cf is its
		k := s.c.CorpusKey(cells[i], split, s.in.sums)
		cf = corpusFile{Key: k, Docs: outs[i][:len(orig.Docs)], Report: reps[i]}
		if orig.Docs2 != nil {
			cf.Docs2 = outs[i][len(orig.Docs):]
		}
		s.countTypes(orig, &cf)
		if err := writeCorpus(s.corpusPath(k), cf); err != nil {
			return Privatized{}, fmt.Errorf("corpus cache: %w", err)
		}
	}
	if len(cells) > 1 {
		s.logf("privatized the %s split of %s for %d more settings that draw its noise (common_noise)", split, cell, len(cells)-1)
	}
	return Privatized{Split: orig.with(cf.Docs, cf.Docs2), Original: orig, Report: &cf.Report, Seconds: secs}, nil
}

// corpusPath is where the corpus cache keeps the privatized split of
// corpus key key.
func (s *privatizer) corpusPath(key string) string {
	return filepath.Join(s.c.Cache, "corpora", key+".gob.gz")
}

// splitSharers are, under common_noise, the config's other utility cells
// whose privatized split draws the noise of cell's (the same streams:
// experiments.Config.SourceStream, and seed), one per corpus entry, in
// plan order, without those the corpus cache holds: privatizing cell's
// split privatizes theirs with it (mech.SharedPrivatize), and their
// cells read them from the cache.
func (s *privatizer) splitSharers(cell experiments.Cell, split string) []experiments.Cell {
	key := func(o experiments.Cell) string { return s.c.CorpusKey(o, split, s.in.sums) }
	group := groupOf(s.c, cell, func(o experiments.Cell) string { return splitGroup(s.c, o, split) }, key)
	return slices.DeleteFunc(group, func(o experiments.Cell) bool { return exists(s.corpusPath(key(o))) })
}

// countTypes measures the per-word-type unchanged rate of a privatized
// split (cheap: one pass over the text), for cache entries written before
// it was measured too.
func (s *privatizer) countTypes(orig Split, cf *corpusFile) {
	if cf.Report.Types > 0 {
		return
	}
	inVocab := func(w string) bool { _, ok := s.in.mech.Index(w); return ok }
	cf.Report.CountTypes(append(slices.Clip(orig.Docs), orig.Docs2...), append(slices.Clip(cf.Docs), cf.Docs2...), inVocab)
}

// with is the split with other tokens (same examples and labels).
func (sp Split) with(docs, docs2 [][]string) Split {
	sp.Docs, sp.Docs2 = docs, docs2
	return sp
}

// corpusFile is a privatized split as cached on disk: gob in gzip, named
// by its corpus key.
type corpusFile struct {
	Key         string
	Docs, Docs2 [][]string
	Report      metrics.Privatization
}

// readCorpus reads a cache entry and verifies it (readGobGz): the entry
// must be of this key and this many examples. Anything else is an error,
// and the caller privatizes again.
func readCorpus(path, key string, n int) (corpusFile, error) {
	var cf corpusFile
	if err := readGobGz(path, &cf); err != nil {
		return cf, err
	}
	if cf.Key != key || len(cf.Docs) != n {
		return cf, fmt.Errorf("holds another corpus (key %.12s, %d examples)", cf.Key, len(cf.Docs))
	}
	return cf, nil
}

// writeCorpus caches a privatized split atomically.
func writeCorpus(path string, cf corpusFile) error { return writeGobGz(path, cf) }

// A privatizer builds the cells' mechanisms over the candidate space (an
// index built on first use) and privatizes their splits, through the
// verified content-addressed corpus cache: the one path by which a split
// is privatized.
type privatizer struct {
	c        *experiments.Config
	in       *inputs
	dev      gotch.Device
	space    *mech.Space
	readOnly bool // reads the caches, writes nothing (a dry run)
	rates    *rateBook
	logf     func(format string, args ...any)
}

// candidates returns the candidate space, indexing the vectors
// on first use.
func (s *privatizer) candidates() (*mech.Space, error) {
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
func (s *privatizer) mechanism(cell experiments.Cell, progress io.Writer) (m mech.Mechanism, built float64, err error) {
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
