package mech

import (
	"context"
	"fmt"
	"sync"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/mech/knn"
)

// Notion is the privacy guarantee a mechanism gives. The ε of different
// notions are not comparable.
type Notion string

const (
	MetricDP Notion = "metric-dp"    // ε·d_χ-privacy, d Euclidean (or the mechanism's own metric)
	SetDP    Notion = "pure-dp-set"  // pure ε-DP among inputs that share an output set (CusText)
	NoDP     Notion = "no-guarantee" // e.g. Vickrey with input exclusion
)

// Mechanism privatizes tokenized documents word by word.
type Mechanism interface {
	// Name identifies the mechanism and its parameters, e.g. "vickrey(t=0.5)".
	Name() string
	Notion() Notion
	Epsilon() float64
	// Privatize returns a privatized copy of docs. Tokens without a vector
	// are kept unchanged and counted (the OOV policy "keep").
	Privatize(ctx context.Context, docs [][]string, src Source) ([][]string, Report, error)
}

// Report describes what a privatization did, for result records.
type Report struct {
	Mechanism  string  `json:"mechanism"`
	Notion     Notion  `json:"notion"`
	Epsilon    float64 `json:"epsilon"`
	Candidates string  `json:"candidates"` // the candidate vocabulary
	OOVPolicy  string  `json:"oov_policy"`
	Tokens     int64   `json:"tokens"`
	OOV        int64   `json:"oov"`
	Unchanged  int64   `json:"unchanged"` // in-vocabulary tokens whose output equals the input
	Fallbacks  int64   `json:"knn_fallbacks"`
	RNG        string  `json:"rng"`
}

// OriginalProportion is the share of all tokens left unchanged (OOV
// tokens included, as they are kept).
func (r Report) OriginalProportion() float64 {
	if r.Tokens == 0 {
		return 0
	}
	return float64(r.Unchanged+r.OOV) / float64(r.Tokens)
}

// Space is the candidate vocabulary: an embedding and its search index.
// One Space serves every mechanism and ε of a sweep.
type Space struct {
	Emb   *embedding.Embedding
	Index *knn.Index
	// CacheDir holds precomputed structures across runs (see cache.go);
	// "" keeps them in memory only.
	CacheDir string

	mu    sync.Mutex
	sqrts map[float64][]float64 // Mahalanobis Σ_p^{1/2} by λ
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
		m, err = SigmaPSqrt(s.Emb.Data, s.Emb.Len(), s.Emb.Dim, lambda)
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

// NewSpace indexes the embedding's vectors on device.
func NewSpace(emb *embedding.Embedding, device gotch.Device, budget int64) (*Space, error) {
	ix, err := knn.New(emb.Data, emb.Len(), emb.Dim, device, knn.Options{Budget: budget})
	if err != nil {
		return nil, err
	}
	return &Space{Emb: emb, Index: ix}, nil
}

// Close frees the index.
func (s *Space) Close() { s.Index.Close() }

// Describe names the candidate vocabulary for reports.
func (s *Space) Describe() string {
	return fmt.Sprintf("%s sha256:%s", s.Emb.String(), short(s.Emb.SourceSHA256))
}

func short(s string) string {
	if len(s) > 16 {
		return s[:16]
	}
	return s
}
