package runner

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/models"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/torchrt"
)

// Options control a run without changing its results.
type Options struct {
	// Workers overrides the config's workers (0: keep it).
	Workers int
	// Shard and Shards make this process run only the cells whose index
	// in the sweep is Shard modulo Shards (Shards 0: all cells); a
	// cluster runs one shard per node or GPU over a shared output folder.
	Shard, Shards int
	// Spawn starts the worker process of one shard (the same binary, run
	// with --shard); with Workers > 1 and Spawn set, cells run in Workers
	// processes, each with its own libtorch generator and threads.
	// Without Spawn they run one at a time in this process.
	Spawn func(ctx context.Context, shard, shards, threads int) *exec.Cmd
	// DryRun lists the cells and what is cached, and runs nothing.
	DryRun bool
	// Progress receives progress bars (drawn on terminals only); Log one
	// line per event. Either may be nil.
	Progress, Log io.Writer
}

// CellStatus is one cell of a run's plan or outcome.
type CellStatus struct {
	Key    string           `json:"key"`
	Cell   experiments.Cell `json:"cell"`
	Status string           `json:"status"` // cached, todo, ok, failed, other-shard
	Error  string           `json:"error,omitempty"`
}

// Summary is what a run did.
type Summary struct {
	Out    string       `json:"out"`
	Cells  []CellStatus `json:"cells"`
	Reused int          `json:"reused"`
	Ran    int          `json:"ran"`
	Failed int          `json:"failed"`
	Tables []string     `json:"tables,omitempty"`
	Plots  []string     `json:"plots,omitempty"`
}

// Run executes the config's sweep: cells with a successful record are
// reused, the others are run (privatizing through the corpus cache,
// training, evaluating) and recorded atomically one by one; a failing cell
// is recorded with its error and the sweep goes on. Unless sharded, Run
// then writes the manifest, tables and plots.
func Run(ctx context.Context, c *experiments.Config, opt Options) (Summary, error) {
	sum := Summary{Out: c.Output}
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format+"\n", args...)
		}
	}
	workers := c.Workers
	if opt.Workers > 0 {
		workers = opt.Workers
	}
	dev, err := torchrt.ParseDevice(c.Device)
	if err != nil {
		return sum, c.ErrAt(err.Error(), "device")
	}
	c.Device = torchrt.DeviceString(dev) // auto resolved before hashing
	threads := c.Threads
	if threads == 0 && opt.Shards > 1 {
		threads = max(1, runtime.NumCPU()/opt.Shards)
	}
	if err := torchrt.SetThreads(threads); err != nil {
		// libtorch fixes its pool once parallel work has run in the
		// process; records carry the count actually used.
		logf("warning: %v; running with %d threads", err, torchrt.Threads())
	}
	started := time.Now()
	in, err := prepare(ctx, c, opt.Log, opt.Progress)
	if err != nil {
		return sum, err
	}
	store, err := results.OpenStore(c.Output)
	if err != nil {
		return sum, err
	}
	var todo []int
	for i, cell := range c.Cells() {
		cs := CellStatus{Key: c.Key(cell, in.sums), Cell: cell, Status: "todo"}
		switch done, err := store.Done(cs.Key); {
		case err != nil:
			return sum, err
		case done:
			cs.Status = "cached"
			sum.Reused++
		case opt.Shards > 1 && i%opt.Shards != opt.Shard:
			cs.Status = "other-shard"
		default:
			todo = append(todo, i)
		}
		sum.Cells = append(sum.Cells, cs)
	}
	logf("%s: %d cells, %d cached, %d to run (data %.12s, vectors %.12s)", c.File(), len(sum.Cells), sum.Reused, len(todo), in.sums.Data, in.sums.Embedding)
	if opt.DryRun {
		return sum, nil
	}
	prov, err := newProvenance(c, in.sums, threads)
	if err != nil {
		return sum, err
	}
	prov.Started = started.UTC().Format(time.RFC3339)
	if workers > 1 && opt.Spawn != nil && opt.Shards == 0 && len(todo) > 1 {
		if err := spawn(ctx, opt, workers, len(todo), store, sum.Cells); err != nil {
			return sum, err
		}
	} else {
		ex := &executor{c: c, in: in, store: store, dev: dev, prov: prov, opt: opt, nested: workers <= 1 || opt.Spawn == nil}
		defer ex.close()
		bar := progress.New(opt.Progress, int64(len(todo)), "cells", false)
		for _, i := range todo {
			if err := ctx.Err(); err != nil {
				bar.Finish()
				return sum, err
			}
			cs := &sum.Cells[i]
			rec := ex.run(ctx, cs.Key, cs.Cell)
			if errors.Is(ctx.Err(), context.Canceled) {
				bar.Finish()
				return sum, ctx.Err() // an interrupted cell is not recorded: the next run redoes it
			}
			if err := store.Put(rec); err != nil {
				bar.Finish()
				return sum, err
			}
			logf("%s: %s", cs.Cell, outcome(rec))
			bar.Add(1)
		}
		bar.Finish()
	}
	// Final statuses from the store: the only truth, whoever ran the cells.
	for i := range sum.Cells {
		cs := &sum.Cells[i]
		if cs.Status == "cached" || cs.Status == "other-shard" {
			continue
		}
		r, ok, err := store.Get(cs.Key)
		switch {
		case err != nil:
			return sum, err
		case !ok:
			cs.Status, cs.Error = "failed", "no record: its worker stopped before finishing it"
		case r.Status == "ok":
			cs.Status = "ok"
		default:
			cs.Status, cs.Error = "failed", r.Error
		}
		if cs.Status == "ok" {
			sum.Ran++
		} else {
			sum.Failed++
		}
	}
	if opt.Shards > 1 {
		return sum, nil
	}
	if err := writeOutputs(c, store, &sum, prov, time.Since(started)); err != nil {
		return sum, err
	}
	return sum, nil
}

func outcome(r results.Record) string {
	if r.Status != "ok" {
		return "FAILED: " + r.Error
	}
	return fmt.Sprintf("accuracy %.4f, macro-F1 %.4f (%.0f s)", r.Test.Accuracy, r.Test.MacroF1, r.Provenance.WallSeconds)
}

// spawn runs the todo cells in worker processes (one shard each) and
// shows the sweep's progress by counting records.
func spawn(ctx context.Context, opt Options, workers, todo int, store *results.Store, cells []CellStatus) error {
	threads := max(1, runtime.NumCPU()/workers)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		cmd := opt.Spawn(ctx, w, workers, threads)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := cmd.CombinedOutput(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() < 0 { // failed cells exit ≥ 1 and are recorded
					errs[w] = fmt.Errorf("worker %d: %v\n%s", w, err, tail(out))
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	bar := progress.New(opt.Progress, int64(todo), fmt.Sprintf("cells (%d workers)", workers), false)
	count := func() int64 {
		n := 0
		for _, cs := range cells {
			if cs.Status == "todo" {
				if _, ok, _ := store.Get(cs.Key); ok {
					n++
				}
			}
		}
		return int64(n)
	}
	var shown int64
	for {
		select {
		case <-done:
			bar.Add(count() - shown)
			bar.Finish()
			if err := ctx.Err(); err != nil {
				return err
			}
			return errors.Join(errs...)
		case <-time.After(time.Second):
			n := count()
			bar.Add(n - shown)
			shown = n
		}
	}
}

func tail(b []byte) []byte {
	if len(b) > 2000 {
		return b[len(b)-2000:]
	}
	return b
}

// executor runs cells in this process.
type executor struct {
	c      *experiments.Config
	in     *inputs
	store  *results.Store
	dev    gotch.Device
	prov   results.Provenance
	opt    Options
	nested bool // draw privatization and training bars

	space *mech.Space
}

func (ex *executor) close() {
	if ex.space != nil {
		ex.space.Close()
	}
}

func (ex *executor) progressW() io.Writer {
	if ex.nested {
		return ex.opt.Progress
	}
	return nil
}

// run executes one cell and returns its record (failed ones included).
func (ex *executor) run(ctx context.Context, key string, cell experiments.Cell) results.Record {
	start := time.Now()
	rec := results.Record{Key: key, Cell: cell, Status: "ok", Provenance: ex.prov}
	rec.Provenance.Started = start.UTC().Format(time.RFC3339)
	err := ex.runInto(ctx, cell, &rec)
	if err != nil {
		rec.Status, rec.Error = "failed", err.Error()
	}
	rec.Provenance.WallSeconds = time.Since(start).Seconds()
	rec.Provenance.PeakRSSBytes, _ = torchrt.PeakResidentBytes()
	return rec
}

func (ex *executor) runInto(ctx context.Context, cell experiments.Cell, rec *results.Record) error {
	splits := map[string]split{}
	var privTokens int64
	var privSecs float64
	for _, name := range []string{"train", "valid", "test"} {
		role := name
		if name == "valid" {
			role = "train"
		}
		orig := ex.in.splits[name]
		if !cell.Privatizes(role) {
			splits[name] = orig
			continue
		}
		sp, rep, secs, err := ex.corpus(ctx, cell, name, orig)
		if err != nil {
			return fmt.Errorf("privatize %s: %w", name, err)
		}
		if rec.Privacy == nil {
			rec.Privacy = map[string]mech.Report{}
		}
		rec.Privacy[name] = rep
		splits[name] = sp
		if secs > 0 {
			privTokens += rep.Tokens
			privSecs += secs
		}
	}
	if privSecs > 0 {
		rec.Provenance.TokensPerSec = float64(privTokens) / privSecs
	}
	// The vocabulary is what the model is trained on: the (privatized)
	// training split's words.
	counter := datasets.NewCounter()
	for _, d := range [][][]string{splits["train"].docs, splits["train"].docs2} {
		for _, w := range d {
			counter.Add(w...)
		}
	}
	vocab := counter.Vocab(datasets.VocabOptions{Reserved: []string{"<pad>", "<unk>"}})
	data := func(sp split) models.Data {
		d := models.Data{Labels: sp.labels}
		for i, w := range sp.docs {
			d.Seqs = append(d.Seqs, vocab.IDs(w, 1))
			if sp.docs2 != nil {
				d.Seqs2 = append(d.Seqs2, vocab.IDs(sp.docs2[i], 1))
			}
		}
		return d
	}
	train, valid, test := data(splits["train"]), data(splits["valid"]), data(splits["test"])
	pre, _, err := models.EmbeddingMatrix(vocab.Words, ex.in.emb, ex.in.emb.Dim, 0, cell.Seed)
	if err != nil {
		return err
	}
	mc, classes := ex.c.Model, int64(len(ex.in.dataset.Labels))
	dir, err := os.MkdirTemp("", "xp-cell")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opt := models.TrainOptions{Epochs: ex.c.Train.Epochs, Batch: ex.c.Train.Batch, MaxLen: ex.c.Train.MaxLen, Patience: ex.c.Train.Patience,
		Classes: int(classes), Seed: cell.Seed, Device: ex.dev, Progress: ex.progressW(), Dir: dir}
	return torchrt.Do(func() error {
		torchrt.ManualSeed(int64(cell.Seed))
		var m interface {
			models.Classifier
			Close()
		}
		var err error
		switch mc.Kind {
		case "baseline":
			m, err = models.NewBaseline(models.BaselineConfig{Vocab: int64(vocab.Len()), EmbedDim: int64(ex.in.emb.Dim), Classes: classes, Hidden: mc.HeadHidden,
				Dropout: mc.Dropout, LR: mc.LR, ClipNorm: mc.Clip, Pretrained: pre, Freeze: !mc.FineTune, Pair: ex.in.dataset.Pair}, ex.dev)
		default:
			m, err = models.NewBiLSTM(models.BiLSTMConfig{Vocab: int64(vocab.Len()), EmbedDim: int64(ex.in.emb.Dim), Hidden: mc.Hidden, Layers: mc.Layers, Classes: classes,
				Dropout: mc.Dropout, LR: mc.LR, ClipNorm: mc.Clip, Pretrained: pre, Freeze: !mc.FineTune, Pooling: mc.Pooling, Pair: ex.in.dataset.Pair, HeadHidden: mc.HeadHidden}, ex.dev)
		}
		if err != nil {
			return err
		}
		defer m.Close()
		res, err := models.Train(ctx, m, train, valid, opt)
		if err != nil {
			return err
		}
		rec.Valid, rec.BestEpoch, rec.Epochs = res.Valid, res.BestEpoch, res.Epochs
		var eps float64
		for _, e := range res.Epochs {
			eps += e.ExamplesPerSec
		}
		rec.Provenance.ExamplesPerSec = eps / float64(len(res.Epochs))
		rec.Test, err = models.Evaluate(m, test, opt)
		return err
	})
}

// corpusFile is a privatized split as cached on disk.
type corpusFile struct {
	Docs, Docs2 [][]string
	Report      mech.Report
}

// corpus returns the cell's privatized split, from the corpus cache when
// present (secs 0) or by privatizing it (and caching it atomically).
func (ex *executor) corpus(ctx context.Context, cell experiments.Cell, name string, orig split) (split, mech.Report, float64, error) {
	path := filepath.Join(ex.c.Cache, "corpora", ex.c.CorpusKey(cell, name, ex.in.sums)+".gob.gz")
	if f, err := os.Open(path); err == nil {
		defer f.Close()
		var cf corpusFile
		zr, err := gzip.NewReader(f)
		if err == nil {
			err = gob.NewDecoder(zr).Decode(&cf)
		}
		if err == nil && len(cf.Docs) == len(orig.docs) {
			return split{docs: cf.Docs, docs2: cf.Docs2, labels: orig.labels}, cf.Report, 0, nil
		}
		// A damaged cache entry is recomputed.
	}
	if ex.space == nil {
		s, err := mech.NewSpace(ex.in.emb, ex.dev, 0)
		if err != nil {
			return split{}, mech.Report{}, 0, err
		}
		s.CacheDir = filepath.Join(ex.c.Cache, "mech")
		ex.space = s
	}
	m, err := mech.New(cell.Mechanism, ex.space, cell.Epsilon, cell.Params, mech.Options{Counts: ex.in.counts, Progress: ex.progressW()})
	if err != nil {
		return split{}, mech.Report{}, 0, err
	}
	docs := append(append([][]string{}, orig.docs...), orig.docs2...) // pairs: both texts, one stream each
	start := time.Now()
	out, rep, err := m.Privatize(ctx, docs, mech.Source{Seed: cell.Seed, Cell: cell.Stream(), Split: name})
	if err != nil {
		return split{}, rep, 0, err
	}
	secs := time.Since(start).Seconds()
	sp := split{docs: out[:len(orig.docs)], labels: orig.labels}
	if orig.docs2 != nil {
		sp.docs2 = out[len(orig.docs):]
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := gob.NewEncoder(zw).Encode(corpusFile{Docs: sp.docs, Docs2: sp.docs2, Report: rep}); err != nil {
		return split{}, rep, 0, err
	}
	if err := zw.Close(); err != nil {
		return split{}, rep, 0, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return split{}, rep, 0, err
	}
	if err := xio.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return split{}, rep, 0, err
	}
	return sp, rep, secs, nil
}
