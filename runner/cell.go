package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sugarme/gotch"
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
		rec.Status, rec.Error = "failed", oneLine(s.c.Output, key, err)
	}
	rec.Provenance.WallSeconds = time.Since(start).Seconds()
	rec.Provenance.PeakRSSBytes, _ = torchrt.PeakResidentBytes()
	return rec
}

// oneLine is a cell's error as its record keeps it: one line of at most
// maxErrorLine bytes. Where the error says more (a panic's stack trace,
// libtorch's backtrace and the Go stack where it was read:
// torchrt.Detail), the whole text goes to traces/<key>.txt in the output
// folder, which the line names.
func oneLine(out, key string, err error) string {
	msg := err.Error()
	first, _, multi := strings.Cut(msg, "\n")
	detail := torchrt.Detail(err)
	if !multi && len(msg) <= maxErrorLine && detail == "" {
		return msg
	}
	if len(first) > maxErrorLine {
		first = first[:maxErrorLine] + "…"
	}
	whole := msg + "\n"
	if detail != "" {
		whole += "\n" + detail
	}
	path := filepath.Join(out, "traces", key+".txt")
	if werr := os.MkdirAll(filepath.Dir(path), 0o755); werr != nil {
		return first
	}
	if werr := xio.WriteFileAtomic(path, []byte(whole)); werr != nil {
		return first
	}
	return first + " (the whole message: " + filepath.Join("traces", key+".txt") + ")"
}

// maxErrorLine is the longest error a record keeps.
const maxErrorLine = 500

func (s *Session) runInto(ctx context.Context, cell experiments.Cell, rec *results.Record, progress io.Writer) error {
	if cell.Analysis != "" {
		return s.an.analyze(ctx, cell, rec)
	}
	splits, err := s.privatized(ctx, cell, rec, progress)
	if err != nil {
		return err
	}
	if err := s.an.measure(ctx, cell, rec); err != nil {
		return err
	}
	m, t, reused, err := s.models.classifier(ctx, cell, splits, progress)
	if err != nil {
		return err
	}
	defer torchrt.Do(func() error { m.Close(); return nil })
	rec.Model, rec.Provenance.ModelReused = t.Key, reused
	rec.Valid, rec.BestEpoch, rec.Epochs, rec.Provenance.ExamplesPerSec = t.Valid, t.BestEpoch, t.Epochs, t.ExamplesPerSec
	rec.Coverage = map[string]results.Coverage{"train": t.Coverage["train"], "valid": t.Coverage["valid"]}
	var cov results.Coverage
	rec.Test, cov, err = s.models.evaluate(cell, m, t, splits["test"])
	rec.Coverage["test"] = cov
	return err
}

// An analyzer computes the analysis cells and the utility cells' opt-in
// privacy measures over the privatizer's candidates and mechanisms, with
// the draws cache under common noise.
type analyzer struct {
	c    *experiments.Config
	in   *inputs
	dev  gotch.Device
	priv *privatizer
	sums func(experiments.Cell) experiments.Inputs // what keys a cell (Session.sums)
	logf func(format string, args ...any)
}

// analyze computes an analysis cell: its mechanism (if it takes one)
// over the session's candidates, the dataset's word counts when read.
func (s *analyzer) analyze(ctx context.Context, cell experiments.Cell, rec *results.Record) error {
	env, built, err := s.analysisEnv(cell)
	if err != nil {
		return err
	}
	rec.Provenance.ConstructSeconds = built
	start := time.Now()
	a, err := analysis.Run(ctx, cell.Analysis, s.c.Analysis.Params, env)
	if err != nil {
		return err
	}
	if st := s.c.SourceStream(cell); st != cell.Stream() {
		a.Notes = append(a.Notes, fmt.Sprintf("common_noise: drawn from the streams of %s, whose cells draw the same noise", st))
	}
	if secs := time.Since(start).Seconds(); a.Lookups > 0 && secs > 0 {
		rec.Provenance.TokensPerSec = float64(a.Lookups) / secs
	}
	if w, err := analysis.Plan(cell.Analysis, s.c.Analysis.Params, env); err == nil {
		sampled := a.Method != "exact"
		rec.Provenance.WorkUnits = w.Units(sampled)
		if sampled && w.Draws > 1 {
			rec.Provenance.WorkUnits = a.Lookups // the draws the cache did not hold
		}
	}
	rec.Analysis = &a
	return nil
}

// analysisEnv is what an analysis at cell's coordinates reads: the
// session's candidates, the cell's mechanism (if any) and streams, the
// dataset's word counts and labels; built is the time spent building the
// mechanism's costly structure (see mechanism).
func (s *analyzer) analysisEnv(cell experiments.Cell) (env analysis.Env, built float64, err error) {
	space, err := s.priv.candidates()
	if err != nil {
		return analysis.Env{}, 0, err
	}
	in := s.in.view(cell)
	env = analysis.Env{Space: space, Seed: cell.Seed, Counts: in.counts, Labels: in.labels, Texts: in.splits["train"].Docs,
		Source: mech.Source{Seed: cell.Seed, Cell: s.c.SourceStream(cell)}, Device: s.dev}
	if cell.Mechanism != "" {
		if env.Mech, built, err = s.priv.mechanism(cell, nil); err != nil {
			return analysis.Env{}, 0, err
		}
		env.Memo = s.drawMemo(cell)
	}
	if cell.Analysis != "" && cell.Mechanism != "" && s.c.CommonNoise {
		for _, o := range s.sharers(cell) {
			m, b, err := s.priv.mechanism(o, nil)
			if err != nil {
				return analysis.Env{}, 0, err
			}
			built += b
			env.Shared = append(env.Shared, analysis.Sharer{Mech: m, Memo: s.drawMemo(o)})
		}
	}
	return env, built, nil
}

func (s *analyzer) drawMemo(cell experiments.Cell) *drawMemo {
	return &drawMemo{dir: filepath.Join(s.c.Cache, drawsDir), key: s.c.DrawsKey(cell, s.sums(cell)), logf: s.logf}
}

// drawGroup names the analysis cells that draw together under
// common_noise: one analysis, seed and streams (experiments.Config.
// SourceStream); "" for a cell that draws alone.
func drawGroup(c *experiments.Config, cell experiments.Cell) string {
	if !c.CommonNoise || cell.Analysis == "" || cell.Mechanism == "" {
		return ""
	}
	return fmt.Sprintf("%s\x00%s\x00%d", cell.Analysis, c.SourceStream(cell), cell.Seed)
}

// sharers are the other mechanism settings of the config's analysis
// cells that draw cell's noise under common_noise (the same analysis,
// seed and streams: experiments.Config.SourceStream), once each, in plan
// order: cell's draws are drawn for them too, and their cells find
// them in the draws cache.
func (s *analyzer) sharers(cell experiments.Cell) []experiments.Cell {
	return groupOf(s.c, cell, func(o experiments.Cell) string { return drawGroup(s.c, o) }, experiments.Cell.Stream)
}

// groupOf is the config's other cells in plan order whose group is
// cell's (not ""), one per id, none with cell's own id.
func groupOf(c *experiments.Config, cell experiments.Cell, group, id func(experiments.Cell) string) []experiments.Cell {
	g := group(cell)
	if g == "" {
		return nil
	}
	seen := map[string]bool{id(cell): true}
	var out []experiments.Cell
	for _, o := range c.Cells() {
		if group(o) != g || seen[id(o)] {
			continue
		}
		seen[id(o)] = true
		out = append(out, o)
	}
	return out
}

// drawsDir holds the words' sampled outputs (see drawMemo).
const drawsDir = "draws"

// measure computes the config's opt-in privacy measures of each split
// the cell privatizes (analysis.Split), over the split's original words,
// with the streams and draws cache of the cell's analysis environment.
func (s *analyzer) measure(ctx context.Context, cell experiments.Cell, rec *results.Record) error {
	if s.c.Privacy == nil || rec.Privacy == nil {
		return nil
	}
	env, _, err := s.analysisEnv(cell)
	if err != nil {
		return err
	}
	start := time.Now()
	for _, name := range Splits {
		if _, ok := rec.Privacy[name]; !ok {
			continue
		}
		env.Counts = s.in.splitCounts[name]
		a, err := analysis.Split(ctx, s.c.Privacy, env)
		if err != nil {
			return fmt.Errorf("privacy measures of %s: %w", name, err)
		}
		if rec.Measures == nil {
			rec.Measures = map[string]metrics.Analysis{}
		}
		rec.Measures[name] = a
	}
	rec.Provenance.MeasureSeconds = time.Since(start).Seconds()
	return nil
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

// modelVocab is a classifier's vocabulary, from its training input only
// (so that one model serves every split it is evaluated on): every word
// of the training split, and every word of the validation split that has
// a vector. With frozen embeddings (the default) a word's vector is all
// the model knows of it; a word of an evaluated text outside the
// vocabulary that has a vector reaches the model through it (see
// extension), so only an evaluated word without a vector reaches it as
// <unk>. With fine_tune the same holds: words absent from training get no
// gradient and keep their pretrained vectors.
func modelVocab(splits map[string]Split, emb *embedding.Embedding) *datasets.Vocab {
	counter := datasets.NewCounter()
	for _, name := range []string{"train", "valid"} {
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

// extension numbers the words of an evaluated split that have a vector
// but are not in the model's vocabulary, after the vocabulary's ids; the
// model's embedding is extended by their vectors (rows) for evaluation.
type extension struct {
	base  int64
	ids   map[string]int64
	index []int // the words' rows in the embedding, in id order
}

func newExtension(base int) *extension { return &extension{base: int64(base), ids: map[string]int64{}} }

// id is w's extension id, if it has a vector.
func (e *extension) id(w string, emb *embedding.Embedding) (int64, bool) {
	if id, ok := e.ids[w]; ok {
		return id, true
	}
	j, ok := emb.Index(w)
	if !ok {
		return 0, false
	}
	id := e.base + int64(len(e.index))
	e.ids[w], e.index = id, append(e.index, j)
	return id, true
}

// rows are the extension's vectors, in id order.
func (e *extension) rows(emb *embedding.Embedding) []float32 {
	out := make([]float32, 0, len(e.index)*emb.Dim)
	for _, j := range e.index {
		out = append(out, emb.Vector(j)...)
	}
	return out
}

// modelData maps a split to token ids and counts how its tokens reach
// the model: a word outside vocab gets an extension id when ext is given
// and the word has a vector, the unknown-word id otherwise.
func modelData(sp Split, vocab *datasets.Vocab, ext *extension, emb *embedding.Embedding) (models.Data, results.Coverage) {
	d := models.Data{Labels: sp.Labels}
	var cov results.Coverage
	ids := func(doc []string) []int64 {
		out := vocab.IDs(doc, unkID)
		for i, w := range doc {
			cov.Tokens++
			if _, ok := emb.Index(w); ok {
				cov.Vectors++
			}
			if out[i] == unkID && ext != nil {
				if id, ok := ext.id(w, emb); ok {
					out[i] = id
				}
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
