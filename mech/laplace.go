package mech

import (
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// Laplace is the multivariate Laplace mechanism (Feyisetan et al. 2020,
// Algorithm 1): ŵ = argmin_u ‖φ(u) − (φ(w) + Z)‖ with Z from laplaceNoise;
// the input word is a candidate. ε·d_χ-private, d Euclidean.
type Laplace struct {
	noisyNN
}

// NewLaplace returns the mechanism at ε over space; batch is the number of
// tokens searched at once (0: 1024).
func NewLaplace(space *Space, eps float64, batch int) (*Laplace, error) {
	if _, err := check("laplace", eps, nil); err != nil {
		return nil, err
	}
	m := &Laplace{noisyNN{space: space, k: 1, batch: batch, eps: eps, noise: "laplace", pick: nearest}}
	m.self = m
	return m, nil
}

func (m *Laplace) Name() string        { return "laplace" }
func (m *Laplace) Notion() spec.Notion { return spec.MetricDP }

func newReport(m Mechanism, space *Space) metrics.Privatization {
	return metrics.Privatization{Mechanism: m.Name(), Notion: m.Notion(), Epsilon: m.Epsilon(), Candidates: space.Describe(), CandidateCount: space.Emb.Len(), OOVPolicy: "keep", RNG: RNG}
}

// laplaceKind registers the multivariate Laplace mechanism (kind).
var laplaceKind = kind{name: "laplace", search: true,
	build: func(s *Space, eps float64, _ spec.Values, o Options) (Mechanism, error) {
		return NewLaplace(s, eps, o.Batch)
	}}

// Bound is ε·‖φ(x) − φ(x′)‖.
func (m *Laplace) Bound(x, x2 int) float64 { return m.eps * euclid(m.space, x, x2) }
