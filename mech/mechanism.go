package mech

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/mech/knn"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// Mechanism privatizes tokenized documents word by word.
type Mechanism interface {
	// Name identifies the mechanism and its parameters, e.g. "vickrey(t=0.5)".
	Name() string
	// Notion is the guarantee it gives (spec.MetricDP, SetDP or NoDP).
	Notion() spec.Notion
	Epsilon() float64
	// Privatize returns a privatized copy of docs. Tokens without a vector
	// are kept unchanged and counted (the OOV policy "keep").
	Privatize(ctx context.Context, docs [][]string, src Source) ([][]string, metrics.Privatization, error)
}

// Space is the candidate vocabulary: an embedding and its search index.
// One Space serves every mechanism and ε of a sweep.
type Space struct {
	Emb   *embedding.Embedding
	Index *knn.Index
	// CacheDir holds precomputed structures across runs (see cache.go);
	// "" keeps them in memory only.
	CacheDir string
	// KeepCache reads CacheDir's structures but writes none (a dry run
	// builds what it measures in memory only).
	KeepCache bool
	// Batch is the tokens per search of the mechanisms built on the
	// space without Options.Batch (0: 1024). It changes no output.
	Batch int

	mu    sync.Mutex
	sqrts map[float64][]float64 // Mahalanobis Σ_p^{1/2} by λ
	line  []int32               // 1-Diffractor's line of the words
	lists map[int]neighbourList // each drawn word's nearest candidates (prune.go)
	lnorm float64               // the L-th smallest candidate norm, once computed (prune.go)
	maps  []*keptMapping        // CusText's mappings used last, most recent last (mapmemo.go)
}

// sigmaSqrt returns Σ_p^{1/2} for λ, computed once per space.
func (s *Space) sigmaSqrt(lambda float64) ([]float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.sqrts[lambda]; ok {
		return m, nil
	}
	var m []float64
	err := s.cached(s.cacheKey("sigma", lambda), &m, func() (err error) {
		m, err = sigmaPSqrt(s.Emb.Data, s.Emb.Len(), s.Emb.Dim, lambda)
		return err
	})
	if err != nil {
		return nil, err
	}
	if s.sqrts == nil {
		s.sqrts = map[float64][]float64{}
	}
	s.sqrts[lambda] = m
	return m, nil
}

// NewSpace indexes the embedding's vectors on device (budget: the bytes
// of one block of scores, 0 for the index's default). On a GPU a search
// takes 4,096 tokens and, unless budget says otherwise, a block of scores
// up to 1 GiB: a GPU privatizes faster with searches that large
// (docs/gpu.md), where a CPU gains nothing.
func NewSpace(emb *embedding.Embedding, device gotch.Device, budget int64) (*Space, error) {
	batch := 0
	if device != gotch.CPU {
		batch = gpuBatch
		if budget <= 0 {
			budget = gpuBudget
		}
	}
	ix, err := knn.New(emb.Data, emb.Len(), emb.Dim, device, knn.Options{Budget: budget})
	if err != nil {
		return nil, err
	}
	return &Space{Emb: emb, Index: ix, Batch: batch}, nil
}

// A GPU space's tokens per search and bytes of a block of scores.
const (
	gpuBatch  = 4096
	gpuBudget = 1 << 30
)

// Close frees the index.
func (s *Space) Close() { s.Index.Close() }

// Describe names the candidate vocabulary for reports: the vectors'
// file by its name (a record names no folder of the machine that wrote
// it; the checksum says which file it was), size and checksum.
func (s *Space) Describe() string {
	desc := s.Emb.String()
	if src := s.Emb.Source; src != "" && strings.HasPrefix(desc, src) {
		desc = filepath.Base(src) + desc[len(src):]
	}
	return fmt.Sprintf("%s sha256:%s", desc, short(s.Emb.SourceSHA256))
}

func short(s string) string {
	if len(s) > 16 {
		return s[:16]
	}
	return s
}

// split calls f on n items cut into one run [lo, hi) per core, at once,
// and returns when every call has: for work whose items are independent
// (each token's draw comes from its own stream), so the cut changes
// nothing but the time.
func split(n int, f func(lo, hi int)) {
	w := min(n, runtime.GOMAXPROCS(0))
	if w <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for c := 0; c < w; c++ {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(c*n/w, (c+1)*n/w)
	}
	wg.Wait()
}

// tokenCount is the number of tokens of a text (a progress bar's total).
func tokenCount(docs [][]string) int64 {
	var n int64
	for _, d := range docs {
		n += int64(len(d))
	}
	return n
}

// cloneDocs copies a text for a mechanism to overwrite token by token.
func cloneDocs(docs [][]string) [][]string {
	out := make([][]string, len(docs))
	for i, d := range docs {
		out[i] = append([]string(nil), d...)
	}
	return out
}

// eachWord is the walk over running text that the per-token mechanisms
// share (1-Diffractor, the truncated Gumbel, SanText, CusText): it counts every
// token in rep, passes over a token of stop (a stopword rule; nil for
// none) and one without a vector, counted, and calls visit with every
// other token's document, position and row, in text order. ctx is checked
// every 256 documents; bar (nil for none) advances by each document's
// tokens.
func eachWord(ctx context.Context, docs [][]string, stop map[string]bool, space *Space, rep *metrics.Privatization, bar *progress.Bar, visit func(di, pi, row int)) error {
	for di, d := range docs {
		if di&255 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for pi, tok := range d {
			rep.Tokens++
			if stop[tok] {
				rep.Stopwords++
				continue
			}
			w, ok := space.Emb.Index(tok)
			if !ok {
				rep.OOV++
				continue
			}
			visit(di, pi, w)
		}
		bar.Add(int64(len(d)))
	}
	return nil
}
