package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/xp-nlp/xp/analysis"
	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/models"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/torchrt"
)

// run executes one cell and returns its record (failed ones included);
// progress receives the privatization and epoch bars (nil: none).
func (s *Session) run(ctx context.Context, key string, cell experiments.Cell, prov results.Provenance, progress io.Writer) results.Record {
	start := time.Now()
	rec := results.Record{Key: key, Cell: cell, Notion: cell.Notion(), Status: "ok", Provenance: prov}
	rec.Provenance.Started = start.UTC().Format(time.RFC3339)
	if err := s.runInto(ctx, cell, &rec, progress); err != nil {
		rec.Status, rec.Error = "failed", err.Error()
	}
	rec.Provenance.WallSeconds = time.Since(start).Seconds()
	rec.Provenance.PeakRSSBytes, _ = torchrt.PeakResidentBytes()
	return rec
}

func (s *Session) runInto(ctx context.Context, cell experiments.Cell, rec *results.Record, progress io.Writer) error {
	if cell.Analysis != "" {
		return s.analyze(ctx, cell, rec)
	}
	splits, err := s.privatized(ctx, cell, rec, progress)
	if err != nil {
		return err
	}
	vocab := modelVocab(splits, s.in.emb)
	data := map[string]models.Data{}
	rec.Coverage = map[string]results.Coverage{}
	for name, sp := range splits {
		data[name], rec.Coverage[name] = modelData(sp, vocab, s.in.emb)
	}
	return s.train(ctx, cell, vocab, data, rec, progress)
}

// analyze computes an analysis cell: its mechanism (if it takes one)
// over the session's candidates, the dataset's word counts when read.
func (s *Session) analyze(ctx context.Context, cell experiments.Cell, rec *results.Record) error {
	env, err := s.analysisEnv(cell)
	if err != nil {
		return err
	}
	start := time.Now()
	a, err := analysis.Run(ctx, cell.Analysis, s.c.Analysis.Params, env)
	if err != nil {
		return err
	}
	if secs := time.Since(start).Seconds(); a.Lookups > 0 && secs > 0 {
		rec.Provenance.TokensPerSec = float64(a.Lookups) / secs
	}
	rec.Analysis = &a
	return nil
}

// analysisEnv is what an analysis at cell's coordinates reads: the
// session's candidates, the cell's mechanism (if any) and streams, the
// dataset's word counts and labels.
func (s *Session) analysisEnv(cell experiments.Cell) (analysis.Env, error) {
	space, err := s.candidates()
	if err != nil {
		return analysis.Env{}, err
	}
	in := s.in.view(cell)
	env := analysis.Env{Space: space, Seed: cell.Seed, Counts: in.counts, Labels: in.labels,
		Source: mech.Source{Seed: cell.Seed, Cell: cell.Stream()}}
	if cell.Mechanism != "" {
		if env.Mech, err = s.mechanism(cell, nil); err != nil {
			return analysis.Env{}, err
		}
	}
	return env, nil
}

// privatized returns the cell's three splits and records their
// privatization reports, warnings and speed.
func (s *Session) privatized(ctx context.Context, cell experiments.Cell, rec *results.Record, progress io.Writer) (map[string]Split, error) {
	splits := map[string]Split{}
	var tokens int64
	var secs float64
	for _, name := range Splits {
		p, err := s.Split(ctx, cell, name, progress)
		if err != nil {
			return nil, err
		}
		splits[name] = p.Split
		if p.Report == nil {
			continue
		}
		if rec.Privacy == nil {
			rec.Privacy = map[string]metrics.Privatization{}
		}
		rec.Privacy[name] = *p.Report
		if p.Seconds > 0 {
			tokens += p.Report.Tokens
			secs += p.Seconds
		}
	}
	if secs > 0 {
		rec.Provenance.TokensPerSec = float64(tokens) / secs
	}
	rec.Flags = metrics.Flags(rec.Privacy, s.c.Checks.MaxOOV)
	return splits, nil
}

// Reserved ids of the classifier's vocabulary.
const (
	padID = 0
	unkID = 1
)

// modelVocab is the classifier's vocabulary for a cell. With frozen
// embeddings (the default) a word's vector is all the model knows of it,
// so every token of every text the model trains or is evaluated on —
// clean or privatized, as the cell sees it — that has a vector gets it:
// the vocabulary is every word of the training split, and every word of
// the validation and test texts that has a vector. Only an evaluated word
// with neither reaches the model as <unk>. With fine_tune the vocabulary
// is the same: words seen only in evaluated text get no gradient and keep
// their pretrained vectors.
func modelVocab(splits map[string]Split, emb *embedding.Embedding) *datasets.Vocab {
	counter := datasets.NewCounter()
	for _, name := range Splits {
		sp := splits[name]
		for _, docs := range [][][]string{sp.Docs, sp.Docs2} {
			for _, d := range docs {
				for _, w := range d {
					if _, ok := emb.Index(w); ok || name == "train" {
						counter.Add(w)
					}
				}
			}
		}
	}
	return counter.Vocab(datasets.VocabOptions{Reserved: []string{"<pad>", "<unk>"}})
}

// modelData maps a split to token ids and counts how its tokens reach
// the model.
func modelData(sp Split, vocab *datasets.Vocab, emb *embedding.Embedding) (models.Data, results.Coverage) {
	d := models.Data{Labels: sp.Labels}
	var cov results.Coverage
	ids := func(doc []string) []int64 {
		out := vocab.IDs(doc, unkID)
		for i, w := range doc {
			cov.Tokens++
			if _, ok := emb.Index(w); ok {
				cov.Vectors++
			}
			if out[i] == unkID {
				cov.Unknown++
			}
		}
		return out
	}
	for i, doc := range sp.Docs {
		d.Seqs = append(d.Seqs, ids(doc))
		if sp.Docs2 != nil {
			d.Seqs2 = append(d.Seqs2, ids(sp.Docs2[i]))
		}
	}
	return d, cov
}

// train builds the config's model over the cell's vocabulary, trains it
// on the train split (selecting the epoch on valid), evaluates it on
// test, and records the numbers.
//
// Training keeps a checkpoint after every epoch under the cache
// (checkpoints/<cell key>): a process stopped mid-cell (preempted, killed,
// a node lost) and run again resumes the cell after its last finished
// epoch with the same result as an uninterrupted run. The checkpoint is
// removed once the cell's scores are computed.
func (s *Session) train(ctx context.Context, cell experiments.Cell, vocab *datasets.Vocab, data map[string]models.Data, rec *results.Record, progress io.Writer) (err error) {
	pre, _, err := models.EmbeddingMatrix(vocab.Words, s.in.emb, s.in.emb.Dim, padID, cell.Seed)
	if err != nil {
		return err
	}
	dir, err := xio.MkdirTemp(filepath.Join(s.c.Cache, "tmp"), "cell")
	if err != nil {
		return fmt.Errorf("checkpoint folder: %w", err)
	}
	defer os.RemoveAll(dir)
	classes := len(s.in.dataset.Labels)
	ck := filepath.Join(s.c.Cache, "checkpoints", rec.Key)
	opt := models.TrainOptions{Epochs: s.c.Train.Epochs, Batch: s.c.Train.Batch, MaxLen: s.c.Train.MaxLen, Patience: s.c.Train.Patience,
		Classes: classes, Pad: padID, Seed: cell.Seed, Device: s.dev, Progress: progress, Dir: dir, Checkpoint: ck}
	env := models.Env{Vocab: int64(vocab.Len()), EmbedDim: int64(s.in.emb.Dim), Classes: int64(classes), Pretrained: pre, Pair: s.in.dataset.Pair, Device: s.dev}
	defer func() {
		if err != nil && ctx.Err() == nil {
			os.RemoveAll(ck) // a failed cell starts afresh when retried
		}
	}()
	return torchrt.Do(func() error {
		torchrt.ManualSeed(int64(cell.Seed))
		m, err := models.New(s.c.Model.Kind, s.c.Model.Params, env)
		if err != nil {
			return err
		}
		defer m.Close()
		res, err := models.Train(ctx, m, data["train"], data["valid"], opt)
		if err != nil {
			return err
		}
		rec.Valid, rec.BestEpoch, rec.Epochs = res.Valid, res.BestEpoch, res.Epochs
		var eps float64
		for _, e := range res.Epochs {
			eps += e.ExamplesPerSec
		}
		rec.Provenance.ExamplesPerSec = eps / float64(len(res.Epochs))
		if rec.Test, err = models.Evaluate(m, data["test"], opt); err != nil {
			return err
		}
		return os.RemoveAll(ck)
	})
}
