package mech

import (
	"context"

	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// Laplace is the multivariate Laplace mechanism (Feyisetan et al. 2020,
// Algorithm 1): ŵ = argmin_u ‖φ(u) − (φ(w) + Z)‖ with Z from LaplaceNoise;
// the input word is a candidate. ε·d_χ-private, d Euclidean.
type Laplace struct {
	eps float64
	nn  noisyNN
}

// NewLaplace returns the mechanism at ε over space; batch is the number of
// tokens searched at once (0: 1024).
func NewLaplace(space *Space, eps float64, batch int) (*Laplace, error) {
	if _, err := check("laplace", eps, nil); err != nil {
		return nil, err
	}
	return &Laplace{eps: eps, nn: noisyNN{space: space, k: 1, batch: batch, eps: eps, pick: nearest}}, nil
}

func (m *Laplace) Name() string        { return "laplace" }
func (m *Laplace) Notion() spec.Notion { return spec.MetricDP }
func (m *Laplace) Epsilon() float64    { return m.eps }

func (m *Laplace) Privatize(ctx context.Context, docs [][]string, src Source) ([][]string, metrics.Privatization, error) {
	rep := newReport(m, m.nn.space)
	out, err := m.nn.run(ctx, docs, src, &rep)
	return out, rep, err
}

func newReport(m Mechanism, space *Space) metrics.Privatization {
	return metrics.Privatization{Mechanism: m.Name(), Notion: m.Notion(), Epsilon: m.Epsilon(), Candidates: space.Describe(), CandidateCount: space.Emb.Len(), OOVPolicy: "keep", RNG: RNG}
}

// Draws privatizes each of rows n times in shared search batches, with
// the streams n single-token Privatize calls per word would use (see
// WordSource), and calls f with each row's outputs.
func (m *Laplace) Draws(ctx context.Context, rows []int, n int, src Source, f func(i int, outs []int32) error) error {
	return m.nn.draws(ctx, rows, n, src, f)
}
