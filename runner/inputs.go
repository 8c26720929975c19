package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
)

// Split is one tokenized split as a cell sees it: original or privatized
// tokens, the second texts of sentence pairs, and labels.
type Split struct {
	IDs    []string
	Docs   [][]string
	Docs2  [][]string // nil unless the dataset is of pairs
	Labels []int64
}

// Splits names the three splits a cell reads: train, the validation split
// carved from it, and the evaluated split.
var Splits = []string{"train", "valid", "test"}

// role is the part of a cell a split belongs to: privatizing "train"
// covers the training and validation splits.
func role(split string) string {
	if split == "test" {
		return "test"
	}
	return "train"
}

// inputs are what every cell of a run reads, loaded once.
type inputs struct {
	dataset *datasets.Dataset
	splits  map[string]Split     // train, valid, test (original tokens)
	emb     *embedding.Embedding // the classifier's input vectors
	// mech is the mechanisms' vectors: their candidates and metric (emb
	// unless the config gives mechanism_embedding).
	mech   *embedding.Embedding
	counts map[string]int64 // word counts over every split: the task vocabulary
	// splitCounts are each split's own word counts (both texts of pairs):
	// the prior of its privacy measures.
	splitCounts map[string]map[string]int64
	// labels is each word's label in a word-level dataset (the opinion
	// lexicon's polarity), for analyses.
	labels map[string]int
	sums   experiments.Inputs
	// pieces is a pieces model's checkpoint (nil for word-id models).
	pieces *pieceInput
	// words is the analysis cells' view of the data (the words of
	// dataset.train) when the run also has utility cells, which read the
	// task's splits (nil otherwise: both read this one).
	words *inputs
}

// view is what a cell reads: the analysis view for analysis cells.
func (in *inputs) view(cell experiments.Cell) *inputs {
	if cell.Analysis != "" && in.words != nil {
		return in.words
	}
	return in
}

// load reads the dataset and embedding the config names, carves the
// validation split, subsamples, tokenizes and checksums. Missing files
// are reported at the config's key before anything is read. With
// readOnly the embedding cache is read but not written.
func load(ctx context.Context, c *experiments.Config, readOnly bool, log, progress io.Writer) (*inputs, error) {
	if err := checkFiles(c); err != nil {
		return nil, err
	}
	var in *inputs
	switch {
	case !c.ReadsDataset():
		in = &inputs{}
	case c.IsAnalysis():
		d, err := loadDataset(ctx, c)
		if err != nil {
			return nil, err
		}
		ex, err := wordsOf(c, d)
		if err != nil {
			return nil, err
		}
		in = tokenize(c, d, ex)
		if d.WordLevel {
			in.labels = map[string]int{}
			for _, x := range ex["train"] {
				in.labels[x.Text] = x.Label
			}
		}
		if c.HasUtilityCells() {
			// The utility cells of a utility-loss stage read the task's
			// splits of the same loaded data (carving valid replaces the
			// training split in d, not the words taken above); the analysis
			// cells keep their view of the words.
			ex, err := splitsOf(c, d)
			if err != nil {
				return nil, err
			}
			task := tokenize(c, d, ex)
			task.words, in = in, task
		}
	default:
		d, err := loadDataset(ctx, c)
		if err != nil {
			return nil, err
		}
		ex, err := splitsOf(c, d)
		if err != nil {
			return nil, err
		}
		in = tokenize(c, d, ex)
	}
	e, sum, err := loadVectors(ctx, c, "embedding", c.Embedding, readOnly, log, progress)
	if err != nil {
		return nil, err
	}
	e, sum = restrictVocabulary(c.Embedding, e, sum, in.counts)
	in.emb, in.mech, in.sums.Embedding = e, e, sum
	if c.MechEmbedding != nil {
		if in.mech, in.sums.MechEmbedding, err = loadVectors(ctx, c, "mechanism_embedding", *c.MechEmbedding, readOnly, log, progress); err != nil {
			return nil, err
		}
		in.mech, in.sums.MechEmbedding = restrictVocabulary(*c.MechEmbedding, in.mech, in.sums.MechEmbedding, in.counts)
	}
	if err := checkWords(c, in.mech); err != nil {
		return nil, err
	}
	if usesPieces(c) && in.splits != nil {
		if in.pieces, in.sums.Checkpoint, err = loadCheckpoint(c); err != nil {
			return nil, err
		}
	}
	if w := in.words; w != nil {
		w.emb, w.mech, w.sums.Embedding, w.sums.MechEmbedding = in.emb, in.mech, in.sums.Embedding, in.sums.MechEmbedding
	}
	return in, nil
}

// loadVectors reads the word vectors a config section (key) names,
// restricted to its top words, and returns them with their checksum.
func loadVectors(ctx context.Context, c *experiments.Config, key string, ec experiments.EmbeddingConfig, readOnly bool, log, progress io.Writer) (*embedding.Embedding, string, error) {
	format := ec.Format
	if format == "auto" {
		format = ""
	}
	e, err := embedding.Load(ctx, c.Path(ec.Path), embedding.Options{Format: format, CacheDir: filepath.Join(c.Cache, "embeddings"), KeepCache: readOnly, Progress: progress, Log: log})
	if err != nil {
		return nil, "", c.ErrAt(err.Error(), key, "path")
	}
	if ec.Top > 0 && ec.Top < e.Len() {
		e = e.Top(ec.Top)
	}
	return e, strings.TrimSpace(e.SourceSHA256 + " " + e.Restriction), nil // the restriction (top N) when there is one
}

// restrictVocabulary keeps, under vocabulary: dataset, only the vectors of
// the words the dataset's texts hold (counts: the task vocabulary), and
// says so in the vectors' checksum (so in every key that reads them).
func restrictVocabulary(ec experiments.EmbeddingConfig, e *embedding.Embedding, sum string, counts map[string]int64) (*embedding.Embedding, string) {
	if ec.Vocabulary != "dataset" {
		return e, sum
	}
	words := slices.Sorted(maps.Keys(counts))
	e, _ = e.Restrict(words)
	return e, strings.TrimSpace(e.SourceSHA256 + " " + e.Restriction)
}

// checkWords reports, at the config's key, a listed analysis word without
// a vector before any cell runs (every cell would fail on it).
func checkWords(c *experiments.Config, e *embedding.Embedding) error {
	v := c.AnalysisParams()
	if !v.Has("list") || (v.Has("from") && v.String("from") != "list") {
		return nil
	}
	var missing []string
	for _, w := range v.Strings("list") {
		if _, ok := e.Index(w); !ok {
			missing = append(missing, strconv.Quote(w))
		}
	}
	if len(missing) > 0 {
		return c.ErrAt(fmt.Sprintf("%s: no vector in %s for %s", c.Analysis.Kind, c.Embedding.Path, strings.Join(missing, ", ")), "analysis", "list")
	}
	return nil
}

// besideHint says, for a relative path missing under the data root, that
// a file of that name is beside the config, and how to name it there.
func besideHint(c *experiments.Config, p string) string {
	alt := c.Beside(p)
	if alt == "" || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") {
		return ""
	}
	if _, err := os.Stat(first(xio.SplitMember(alt))); err != nil {
		return ""
	}
	return fmt.Sprintf("; %s is beside the config: write ./%s (paths are relative to the data root unless written ./ or ../)", alt, p)
}

// checkFiles reports a missing embedding or dataset at its config key.
func checkFiles(c *experiments.Config) error {
	vectors := map[string]string{"embedding": c.Embedding.Path}
	if c.MechEmbedding != nil {
		vectors["mechanism_embedding"] = c.MechEmbedding.Path
	}
	for _, key := range []string{"embedding", "mechanism_embedding"} {
		p, ok := vectors[key]
		if !ok {
			continue
		}
		if _, err := os.Stat(first(xio.SplitMember(c.Path(p)))); err != nil {
			return c.ErrAt(fmt.Sprintf("%s %s: %v (data root %q; set data: or %s)%s", key, p, err, c.Data, datasets.EnvRoot, besideHint(c, p)), key, "path")
		}
	}
	if !c.ReadsDataset() {
		return nil
	}
	for _, p := range []struct{ key, path string }{{"path", c.Dataset.Path}, {"test_path", c.Dataset.TestPath}} {
		if p.path == "" {
			continue
		}
		if _, err := os.Stat(first(xio.SplitMember(c.Path(p.path)))); err != nil {
			return c.ErrAt(fmt.Sprintf("dataset %s: %v%s", p.key, err, besideHint(c, p.path)), "dataset", p.key)
		}
	}
	if _, err := datasets.Locate(c.Data, c.Dataset.Name, datasets.Options{Path: c.Path(c.Dataset.Path)}); err != nil {
		return c.ErrAt(err.Error(), "dataset", "name")
	}
	return nil
}

// splitsOf is what utility cells read of the loaded corpus: it carves the
// validation split from the training split (in d) and subsamples, giving
// the examples of train, valid and test.
func splitsOf(c *experiments.Config, d *datasets.Dataset) (map[string][]datasets.Example, error) {
	dc := c.Dataset
	for _, s := range []struct{ key, name string }{{"train", dc.Train}, {"test", dc.Test}} {
		ex, err := d.Split(s.name)
		if err != nil {
			return nil, c.ErrAt(err.Error(), "dataset", s.key)
		}
		if len(ex) == 0 || !d.Labelled(s.name) {
			return nil, c.ErrAt(fmt.Sprintf("split %s of %s is empty or unlabelled", s.name, d.Name), "dataset", s.key)
		}
	}
	if shared, n := overlap(d, dc.Train, dc.Test, tokenizer(c.Tokenizer)); n > 0 && float64(shared) >= maxOverlap*float64(n) {
		return nil, c.ErrAt(fmt.Sprintf("split %s of %s: %d of its %d examples are examples of %s, word for word (case and spacing aside; the training file given twice?): a model evaluated on its own training data measures nothing", dc.Test, d.Name, shared, n, dc.Train), "dataset", "test")
	}
	if err := d.Carve(dc.Train, "valid", dc.ValidFraction, dc.SplitSeed); err != nil {
		return nil, err
	}
	train, _ := d.Split(dc.Train)
	valid, _ := d.Split("valid")
	test, _ := d.Split(dc.Test)
	ex := map[string][]datasets.Example{
		"train": datasets.Sample(train, dc.TrainLimit, dc.SplitSeed, "train"),
		"valid": valid,
		"test":  datasets.Sample(test, dc.TestLimit, dc.SplitSeed, "test"),
	}
	if dc.TrainLimit > 0 {
		ex["valid"] = datasets.Sample(valid, max(1, dc.TrainLimit/9), dc.SplitSeed, "valid")
	}
	return ex, nil
}

// maxOverlap is the share of a test split's examples found, text for
// text, in the training split at which the run is refused: no published
// corpus comes near it (duplicates across splits are a few percent at
// most); a copy of the training file as the test file reaches 1.
const maxOverlap = 0.9

// overlap counts the examples of split b whose text (and second text) is
// that of an example of split a, of n examples in b, as the model reads
// them: the tokenizer's words, case folded (a copy of the training file
// with trailing spaces or another case is the same text to a model).
func overlap(d *datasets.Dataset, a, b string, tok func(string) []string) (shared, n int) {
	ea, err := d.Split(a)
	if err != nil {
		return 0, 0
	}
	eb, err := d.Split(b)
	if err != nil {
		return 0, 0
	}
	norm := func(e datasets.Example) [2]string {
		return [2]string{strings.ToLower(strings.Join(tok(e.Text), " ")), strings.ToLower(strings.Join(tok(e.Text2), " "))}
	}
	seen := make(map[[2]string]bool, len(ea))
	for _, e := range ea {
		seen[norm(e)] = true
	}
	for _, e := range eb {
		if seen[norm(e)] {
			shared++
		}
	}
	return shared, len(eb)
}

// wordsOf is what an analysis reads of the loaded dataset: the examples
// of dataset.train (subsampled to train_limit), whose words are its prior
// and vocabulary. Taken before splitsOf carves, it is the whole split.
func wordsOf(c *experiments.Config, d *datasets.Dataset) (map[string][]datasets.Example, error) {
	dc := c.Dataset
	ex, err := d.Split(dc.Train)
	if err != nil {
		return nil, c.ErrAt(err.Error(), "dataset", "train")
	}
	if len(ex) == 0 {
		return nil, c.ErrAt(fmt.Sprintf("split %s of %s is empty", dc.Train, d.Name), "dataset", "train")
	}
	return map[string][]datasets.Example{"train": datasets.Sample(ex, dc.TrainLimit, dc.SplitSeed, "train")}, nil
}

// loadDataset reads the config's dataset once (both views come from it).
func loadDataset(ctx context.Context, c *experiments.Config) (*datasets.Dataset, error) {
	dc := c.Dataset
	opt := datasets.Options{Seed: dc.SplitSeed, Path: c.Path(dc.Path),
		Table:  datasets.TableOptions{Text: dc.Text, Text2: dc.Text2, Label: dc.Label, TestPath: c.Path(dc.TestPath)},
		Labels: dc.Labels}
	if dc.TestFraction > 0 {
		opt.Carve = []datasets.Carving{{From: dc.Train, To: dc.Test, Fraction: dc.TestFraction}}
	}
	return datasets.Load(ctx, c.Data, dc.Name, opt)
}

// tokenize turns the examples into Splits, counts the task vocabulary and
// checksums everything a cell reads of the data. A word-level dataset's
// entries (the opinion lexicon's) are tokens as they stand, counted once
// each: its vocabulary is its entries and its prior uniform over them
// (the sentence tokenizer would split "2-faced" into fragments that are
// no entry and carry no label).
func tokenize(c *experiments.Config, d *datasets.Dataset, ex map[string][]datasets.Example) *inputs {
	tok := tokenizer(c.Tokenizer)
	if d.WordLevel {
		tok = func(s string) []string { return []string{s} }
	}
	in := &inputs{dataset: d, splits: map[string]Split{}, counts: map[string]int64{}, splitCounts: map[string]map[string]int64{}}
	h := sha256.New()
	for _, name := range Splits {
		var sp Split
		own := map[string]int64{}
		for _, x := range ex[name] {
			w := tok(x.Text)
			sp.IDs = append(sp.IDs, x.ID)
			sp.Docs = append(sp.Docs, w)
			sp.Labels = append(sp.Labels, int64(x.Label))
			var w2 []string
			if d.Pair {
				w2 = tok(x.Text2)
				sp.Docs2 = append(sp.Docs2, w2)
			}
			for _, text := range [2][]string{w, w2} {
				for _, t := range text {
					if d.WordLevel && own[t] > 0 {
						continue // an entry listed twice (under both polarities) is one word
					}
					in.counts[t]++
					own[t]++
				}
			}
			hashExample(h, name, x, w, w2)
		}
		in.splits[name] = sp
		in.splitCounts[name] = own
	}
	in.sums.Data = hex.EncodeToString(h.Sum(nil))
	return in
}

// hashExample feeds one example to the data checksum.
func hashExample(h hash.Hash, split string, x datasets.Example, w, w2 []string) {
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%s\x00%s\n", split, x.ID, x.Label, strings.Join(w, " "), strings.Join(w2, " "))
}

// tokenizer is the config's tokenizer (validated: the name is known).
func tokenizer(name string) func(string) []string {
	t, _ := datasets.TokenizerNamed(name)
	return t.Tokens
}

// first is the first of two values (the file of xio.SplitMember).
func first[T any](a, _ T) T { return a }
