package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sugarme/gotch"
	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/models"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/torchrt"
)

// The model cache: cache/models/<model key>/ holds a trained classifier
// (see experiments.ModelKey) as model.ot (libtorch's parameters) and
// model.json (trained). A folder appears whole, by one rename of a
// finished temporary folder, so a killed process leaves a model or none;
// processes sharing a cache may train one model at the same time (two
// runs of overlapping configs), the first rename wins and the other copy,
// identical, is discarded.
const (
	modelsDir      = "models"
	modelFile      = "model.ot"
	modelMetaFile  = "model.json"
	checkpointsDir = "checkpoints"
	trainDir       = "train" // inside a model's temporary folder: models.Train's Dir
)

// trained is what a cached model's cells record of its training.
type trained struct {
	Key     string   `json:"key"`
	Weights string   `json:"weights_sha256"` // of the weights file: used only when they match (checkWeights)
	Vocab   []string `json:"vocab"`          // token id i is Vocab[i]
	// Input "pieces": the model reads its checkpoint's tokenizer's
	// pieces (Vocab is empty), over Steps optimisation steps.
	Input          string                 `json:"input,omitempty"`
	Steps          int                    `json:"steps,omitempty"`
	BestEpoch      int                    `json:"best_epoch"`
	Valid          metrics.Classification `json:"valid"`
	Epochs         []metrics.Epoch        `json:"epochs"`
	ExamplesPerSec float64                `json:"train_examples_per_sec"`
	// Coverage of the training and validation splits (the evaluated
	// split's is each cell's).
	Coverage map[string]results.Coverage `json:"coverage"`
}

// A trainer trains, caches, opens and evaluates the cells' classifiers
// over the session's inputs on its device: the one place a model trains.
type trainer struct {
	c    *experiments.Config
	in   *inputs
	dev  gotch.Device
	logf func(format string, args ...any)
}

// classifier returns the cell's trained model, open (the caller closes
// it), with its training record: from the cache when it holds the cell's
// model key, otherwise trained on the cell's training and validation
// splits and cached. reused says which.
func (s *trainer) classifier(ctx context.Context, cell experiments.Cell, splits map[string]Split, progress io.Writer) (m models.Model, t *trained, reused bool, err error) {
	key := s.c.ModelKey(cell, s.in.sums)
	dir := filepath.Join(s.c.Cache, modelsDir, key)
	t, err = readTrained(dir, key)
	switch {
	case err == nil:
		if err = checkWeights(dir, t); err == nil {
			if m, err = s.openModel(cell, t, filepath.Join(dir, modelFile)); err == nil {
				return m, t, true, nil
			}
		}
		fallthrough
	case !errors.Is(err, fs.ErrNotExist):
		// A folder appears whole (one rename): a damaged one is damaged
		// for good. Removed, so that the model trained now replaces it.
		s.logf("model %s: %v; training it again", short(key), err)
		if rerr := os.RemoveAll(dir); rerr != nil {
			return nil, nil, false, fmt.Errorf("model cache: %w", rerr)
		}
	}
	m, t, err = s.trainModel(ctx, cell, key, splits, progress)
	return m, t, false, err
}

// readTrained reads a cached model's record and checks it is the model
// named key.
func readTrained(dir, key string) (*trained, error) {
	b, err := xio.ReadFileMax(filepath.Join(dir, modelMetaFile), xio.MaxRecord)
	if err != nil {
		return nil, err
	}
	var t trained
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", modelMetaFile, err)
	}
	if t.Key != key || (len(t.Vocab) == 0) != (t.Input == "pieces") {
		return nil, fmt.Errorf("%s: not the model %s", modelMetaFile, short(key))
	}
	return &t, nil
}

// checkWeights checks that the weights in a cached model's folder are
// those its record names.
func checkWeights(dir string, t *trained) error {
	if t.Weights == "" {
		return fmt.Errorf("%s names no weights hash (cached before models carried one)", modelMetaFile)
	}
	sum, err := xio.SHA256File(filepath.Join(dir, modelFile))
	if err != nil {
		return err
	}
	if sum != t.Weights {
		return fmt.Errorf("%s is not the model cached under this key (sha256 %.12s, its record names %.12s)", modelFile, sum, t.Weights)
	}
	return nil
}

// openModel builds the config's model over t's vocabulary and loads the
// parameters saved at path (nil path: fresh parameters, seeded by the
// cell).
func (s *trainer) openModel(cell experiments.Cell, t *trained, path string) (models.Model, error) {
	env := models.Env{Classes: int64(len(s.in.dataset.Labels)), Pair: s.in.dataset.Pair, Device: s.dev}
	if s.in.pieces != nil {
		env.Checkpoint, env.Steps = s.in.pieces.dir, t.Steps
	} else {
		pre, _, err := models.EmbeddingMatrix(t.Vocab, s.in.emb, s.in.emb.Dim, padID, cell.Seed)
		if err != nil {
			return nil, err
		}
		env.Vocab, env.EmbedDim, env.Pretrained = int64(len(t.Vocab)), int64(s.in.emb.Dim), pre
	}
	var m models.Model
	var err error
	err = torchrt.Do(func() error {
		torchrt.ManualSeed(int64(cell.Seed))
		if m, err = models.New(s.c.Model.Kind, s.c.ModelParams(cell), env); err != nil {
			return err
		}
		if path != "" {
			if err := m.Load(path); err != nil {
				m.Close()
				m = nil
				return err
			}
		}
		return nil
	})
	return m, err
}

// checkpointEvery is how much training a run killed mid-epoch may lose:
// the state is kept after every epoch and, within one, after the first
// step that ends this long after the last state kept. Keeping it writes
// the weights twice and the optimizer's moments (bert-base: about 1.7 GB,
// seconds), a small share of ten minutes.
const checkpointEvery = 10 * time.Minute

// logLines writes each line written to it through logf, after prefix.
type logLines struct {
	logf   func(format string, args ...any)
	prefix string
}

func (l logLines) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		l.logf("%s%s", l.prefix, line)
	}
	return len(p), nil
}

// trainOptions are the config's training settings for a cell.
func (s *trainer) trainOptions(cell experiments.Cell) models.TrainOptions {
	tc := s.c.TrainAt(cell)
	opt := models.TrainOptions{Epochs: tc.Epochs, Batch: tc.Batch, MaxLen: tc.MaxLen, Patience: tc.Patience,
		Classes: len(s.in.dataset.Labels), Pad: padID, Seed: cell.Seed, Device: s.dev}
	if s.in.pieces != nil {
		// Pieces are cut to max_len when tokenized ([SEP] kept): a cut of
		// the batch would drop it.
		opt.MaxLen, opt.Pad = 0, s.in.pieces.pad()
	}
	return opt
}

// trainingData maps the training and validation splits to the model's
// input for cell: pieces of its checkpoint, or word ids over a vocabulary
// of the task (modelVocab), which t then records.
func (s *trainer) trainingData(cell experiments.Cell, splits map[string]Split, t *trained) (map[string]models.Data, error) {
	tc := s.c.TrainAt(cell)
	data := map[string]models.Data{}
	var vocab *datasets.Vocab
	if s.in.pieces == nil {
		vocab = modelVocab(splits, s.in.emb)
		t.Vocab = vocab.Words
	} else {
		t.Input = "pieces"
	}
	for _, name := range []string{"train", "valid"} {
		if s.in.pieces == nil {
			data[name], t.Coverage[name] = modelData(splits[name], vocab, nil, s.in.emb)
			continue
		}
		var err error
		if data[name], t.Coverage[name], err = s.in.pieces.pieceData(splits[name], tc.MaxLen); err != nil {
			return nil, err
		}
	}
	if s.in.pieces != nil {
		perEpoch := (data["train"].Len() + tc.Batch - 1) / max(1, tc.Batch)
		t.Steps = perEpoch * tc.Epochs
	}
	return data, nil
}

// trainModel trains the model named key on the cell's training split
// (selecting the epoch on valid) and caches it.
//
// Training keeps a checkpoint after every epoch, and within one every
// checkpointEvery, under the cache (checkpoints/<model key>): a process
// stopped mid-training (preempted, killed, a node lost) and run again
// resumes from it with the same result as an uninterrupted run. The
// checkpoint is removed once the model is cached, or when training fails.
func (s *trainer) trainModel(ctx context.Context, cell experiments.Cell, key string, splits map[string]Split, progress io.Writer) (m models.Model, t *trained, err error) {
	t = &trained{Key: key, Coverage: map[string]results.Coverage{}}
	data, err := s.trainingData(cell, splits, t)
	if err != nil {
		return nil, nil, err
	}
	tmp, err := xio.MkdirTemp(filepath.Join(s.c.Cache, modelsDir), key)
	if err != nil {
		return nil, nil, fmt.Errorf("model folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, trainDir) // Train's own files (best weights), not cached
	if err := os.Mkdir(work, 0o777); err != nil {
		return nil, nil, fmt.Errorf("model folder: %w", err)
	}
	ck := filepath.Join(s.c.Cache, checkpointsDir, key)
	defer func() {
		if err != nil && ctx.Err() == nil {
			os.RemoveAll(ck) // a failed training starts afresh when retried
		}
	}()
	model, err := s.openModel(cell, t, "")
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			model.Close() // not m: the failing return has set it to nil
		}
	}()
	opt := s.trainOptions(cell)
	opt.Progress, opt.Dir, opt.Checkpoint, opt.CheckpointEvery = progress, work, ck, checkpointEvery
	opt.Log = logLines{logf: s.logf, prefix: "model " + short(key) + ": "} // an epoch's line, a resumption, a state kept: a log's heartbeat where no bar is drawn
	start := time.Now()
	res, err := models.Train(ctx, model, data["train"], data["valid"], opt)
	if err != nil {
		return nil, nil, err
	}
	t.Valid, t.BestEpoch, t.Epochs = res.Valid, res.BestEpoch, res.Epochs
	for _, e := range res.Epochs {
		t.ExamplesPerSec += e.ExamplesPerSec / float64(len(res.Epochs))
	}
	if err := s.cacheModel(model, t, tmp); err != nil {
		return nil, nil, err
	}
	s.logf("model %s trained in %.0fs", short(key), time.Since(start).Seconds())
	if err := os.RemoveAll(ck); err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	return model, t, nil
}

// cacheModel writes m and t into the temporary folder tmp, drops the
// training's own files, and renames tmp to the model's folder.
func (s *trainer) cacheModel(m models.Model, t *trained, tmp string) error {
	if err := os.RemoveAll(filepath.Join(tmp, trainDir)); err != nil {
		return fmt.Errorf("cache model: %w", err)
	}
	if err := torchrt.Do(func() error { return m.Save(filepath.Join(tmp, modelFile)) }); err != nil {
		return fmt.Errorf("cache model: %w", err)
	}
	sum, err := xio.SHA256File(filepath.Join(tmp, modelFile))
	if err != nil {
		return fmt.Errorf("cache model: %w", err)
	}
	t.Weights = sum
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if err := xio.WriteFileAtomic(filepath.Join(tmp, modelMetaFile), b); err != nil {
		return fmt.Errorf("cache model: %w", err)
	}
	dir := filepath.Join(s.c.Cache, modelsDir, t.Key)
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, modelMetaFile)); serr == nil {
			return nil // another process cached the same model first
		}
		return fmt.Errorf("cache model: %w", err)
	}
	return nil
}

// short abbreviates a key for messages.
func short(key string) string { return key[:min(12, len(key))] }

// evaluate scores m on the cell's evaluated split: its words that have a
// vector but are not in the model's vocabulary reach the model through
// their vectors (appended to its embedding, see models.Classifier.Extend).
func (s *trainer) evaluate(cell experiments.Cell, m models.Model, t *trained, test Split) (metrics.Classification, results.Coverage, error) {
	if s.in.pieces != nil {
		data, cov, err := s.in.pieces.pieceData(test, s.c.TrainAt(cell).MaxLen)
		if err != nil {
			return metrics.Classification{}, cov, err
		}
		var met metrics.Classification
		err = torchrt.Do(func() error {
			var err error
			met, err = models.Evaluate(m, data, s.trainOptions(cell))
			return err
		})
		return met, cov, err
	}
	vocab, err := datasets.NewVocab(t.Vocab)
	if err != nil {
		return metrics.Classification{}, results.Coverage{}, fmt.Errorf("model %s: %w", short(t.Key), err)
	}
	ext := newExtension(vocab.Len())
	data, cov := modelData(test, vocab, ext, s.in.emb)
	var met metrics.Classification
	err = torchrt.Do(func() error {
		if err := m.Extend(ext.rows(s.in.emb)); err != nil {
			return err
		}
		var err error
		met, err = models.Evaluate(m, data, s.trainOptions(cell))
		return err
	})
	return met, cov, err
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

// pieceData tokenizes a split for a pieces model: each text's words
// joined by spaces, framed as the checkpoint's tokenizer frames them
// (BERT: [CLS] pieces [SEP], a sentence pair [CLS] a [SEP] b [SEP] with
// token types 0 and 1; RoBERTa: <s> a </s>, <s> a </s></s> b </s>), cut
// to maxLen pieces (0: the most the checkpoint's positions hold; a pair
// loses pieces from its longer text first). Coverage counts the pieces,
// those that are unknown, and those the cut dropped.
func (p *pieceInput) pieceData(sp Split, maxLen int) (models.Data, results.Coverage, error) {
	if maxLen <= 0 || maxLen > p.cfg.MaxLength() {
		maxLen = p.cfg.MaxLength()
	}
	unkPiece, _ := p.tok.Special()
	unk, _ := p.tok.ID(unkPiece)
	d := models.Data{Labels: sp.Labels}
	var cov results.Coverage
	for k, doc := range sp.Docs {
		var second *string
		if sp.Docs2 != nil {
			s := strings.Join(sp.Docs2[k], " ")
			second = &s
		}
		ids, types, dropped := p.tok.Encode(strings.Join(doc, " "), second, maxLen)
		special := p.tok.Framing(second != nil)
		seq := make([]int64, len(ids))
		for i, id := range ids {
			seq[i] = int64(id)
			if id == unk {
				cov.Unknown++
			}
		}
		cov.Tokens += int64(len(ids) - special)
		cov.Truncated += int64(dropped)
		d.Seqs = append(d.Seqs, seq)
		if second != nil {
			tt := make([]int64, len(types))
			for i, t := range types {
				tt[i] = int64(t)
			}
			d.Types = append(d.Types, tt)
		}
	}
	cov.Vectors = cov.Tokens - cov.Unknown
	return d, cov, nil
}
