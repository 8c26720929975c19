package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/experiments"
)

// split is one tokenized split: docs (and docs2, the second texts of
// pairs) with labels.
type split struct {
	docs, docs2 [][]string
	labels      []int64
}

// inputs are what every cell of a run reads, loaded once.
type inputs struct {
	dataset *datasets.Dataset
	splits  map[string]split // train, valid, test (original tokens)
	emb     *embedding.Embedding
	counts  map[string]int64 // word counts over all splits (CusText/SanText+ input vocabulary)
	sums    experiments.Inputs
}

// resolvePath makes p absolute under root unless it already is.
func resolvePath(root, p string) string {
	if p == "" || filepath.IsAbs(p) || root == "" {
		return p
	}
	return filepath.Join(root, p)
}

// prepare loads the dataset and embedding a config names, carves the
// validation split, subsamples, tokenizes and checksums.
func prepare(ctx context.Context, c *experiments.Config, log io.Writer, progress io.Writer) (*inputs, error) {
	root := c.Data
	if root == "" {
		root = datasets.RootFromEnv()
	}
	embPath := resolvePath(root, c.Embedding.Path)
	if _, err := os.Stat(embPath); err != nil {
		return nil, c.ErrAt(fmt.Sprintf("embedding %s: %v (data root %q; set data: or %s)", c.Embedding.Path, err, root, datasets.EnvRoot), "embedding", "path")
	}
	dopt := datasets.Options{Seed: c.Dataset.SplitSeed, Path: resolvePath(root, c.Dataset.Path)}
	if c.Dataset.Path != "" {
		if _, err := os.Stat(dopt.Path); err != nil {
			return nil, c.ErrAt(fmt.Sprintf("dataset path: %v", err), "dataset", "path")
		}
	}
	if _, err := datasets.Locate(root, c.Dataset.Name, dopt); err != nil {
		return nil, c.ErrAt(err.Error(), "dataset", "name")
	}
	d, err := datasets.Load(ctx, root, c.Dataset.Name, dopt)
	if err != nil {
		return nil, err
	}
	for _, s := range []string{c.Dataset.Train, c.Dataset.Test} {
		ex, err := d.Split(s)
		if err != nil {
			return nil, c.ErrAt(err.Error(), "dataset")
		}
		if len(ex) == 0 || ex[0].Label < 0 {
			return nil, c.ErrAt(fmt.Sprintf("split %s of %s is empty or unlabelled", s, d.Name), "dataset")
		}
	}
	if err := d.Carve(c.Dataset.Train, "valid", c.Dataset.ValidFraction, c.Dataset.SplitSeed); err != nil {
		return nil, err
	}
	train, _ := d.Split(c.Dataset.Train)
	valid, _ := d.Split("valid")
	test, _ := d.Split(c.Dataset.Test)
	train = subsample(train, c.Dataset.TrainLimit, c.Dataset.SplitSeed, "train")
	test = subsample(test, c.Dataset.TestLimit, c.Dataset.SplitSeed, "test")
	if c.Dataset.TrainLimit > 0 {
		valid = subsample(valid, max(1, c.Dataset.TrainLimit/9), c.Dataset.SplitSeed, "valid")
	}
	tok := tokenizer(c.Tokenizer)
	in := &inputs{dataset: d, splits: map[string]split{}, counts: map[string]int64{}}
	h := sha256.New()
	for _, s := range []struct {
		name string
		ex   []datasets.Example
	}{{"train", train}, {"valid", valid}, {"test", test}} {
		var sp split
		for _, x := range s.ex {
			w := tok(x.Text)
			sp.docs = append(sp.docs, w)
			sp.labels = append(sp.labels, int64(x.Label))
			for _, t := range w {
				in.counts[t]++
			}
			var w2 []string
			if d.Pair {
				w2 = tok(x.Text2)
				sp.docs2 = append(sp.docs2, w2)
				for _, t := range w2 {
					in.counts[t]++
				}
			}
			hashExample(h, s.name, x, w, w2)
		}
		in.splits[s.name] = sp
	}
	in.sums.Data = hex.EncodeToString(h.Sum(nil))
	format := c.Embedding.Format
	if format == "auto" {
		format = ""
	}
	e, err := embedding.Load(ctx, embPath, embedding.Options{Format: format, CacheDir: filepath.Join(c.Cache, "embeddings"), Progress: progress, Log: log})
	if err != nil {
		return nil, c.ErrAt(err.Error(), "embedding", "path")
	}
	if c.Embedding.Top > 0 && c.Embedding.Top < e.Len() {
		e = e.Top(c.Embedding.Top)
	}
	in.emb = e
	in.sums.Embedding = e.SourceSHA256 + " " + e.Restriction
	return in, nil
}

// hashExample feeds one example to the data checksum.
func hashExample(h hash.Hash, split string, x datasets.Example, w, w2 []string) {
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%s\x00%s\n", split, x.ID, x.Label, strings.Join(w, " "), strings.Join(w2, " "))
}

// subsample keeps n examples chosen by a seeded hash order (all when n is
// 0 or not smaller), in their original order.
func subsample(ex []datasets.Example, n int, seed uint64, name string) []datasets.Example {
	if n <= 0 || n >= len(ex) {
		return ex
	}
	idx := make([]int, len(ex))
	for i := range idx {
		idx[i] = i
	}
	r := rand.New(rand.NewPCG(seed, uint64(len(name))<<32|uint64(len(ex))))
	r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	idx = idx[:n]
	slices.Sort(idx)
	out := make([]datasets.Example, n)
	for i, j := range idx {
		out[i] = ex[j]
	}
	return out
}

func tokenizer(name string) func(string) []string {
	if name == "whitespace" {
		return strings.Fields
	}
	t := datasets.DefaultTokenizer()
	return t.Tokens
}
