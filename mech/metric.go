package mech

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/xp-nlp/xp/mech/knn"
)

// Each mechanism states, in its own file, the bound its guarantee puts
// on the privacy loss between two inputs, Bound(x, x′): for every output
// y,
//
//	ln Pr[M(x) = y] − ln Pr[M(x′) = y] ≤ Bound(x, x′),
//
// +Inf where it promises nothing for the pair. A no-guarantee variant
// (Vickrey with exclude_input, SanText+) states the bound of the
// mechanism it varies, which it does not keep: the privacy audit
// (analysis dp-audit) shows by how much. This file holds the metrics
// the bounds share.

func euclid(s *Space, x, y int) float64 {
	return math.Sqrt(knn.SquaredDistance(s.Emb.Vector(x), s.Emb.Vector(y)))
}

// mahalanobisMetric is ‖Σ_p^{−1/2}(x − y)‖, with Σ_p^{−1/2} computed on
// first use from Σ_p^{1/2}; NaN when Σ_p is singular (λ = 1 with a
// covariance of lower rank than the dimension).
type mahalanobisMetric struct {
	sqrt []float64 // Σ_p^{1/2}, dim × dim
	once sync.Once
	inv  *mat.Dense
	err  error
}

func (m *mahalanobisMetric) distance(s *Space, x, y int) float64 {
	dim := s.Emb.Dim
	m.once.Do(func() {
		var inv mat.Dense
		if err := inv.Inverse(mat.NewDense(dim, dim, m.sqrt)); err != nil {
			m.err = fmt.Errorf("mahalanobis: Σ_p^{1/2} is not invertible: %w", err)
			return
		}
		m.inv = &inv
	})
	if m.err != nil {
		return math.NaN()
	}
	a, b := s.Emb.Vector(x), s.Emb.Vector(y)
	d := mat.NewVecDense(dim, nil)
	for i := range a {
		d.SetVec(i, float64(a[i])-float64(b[i]))
	}
	var z mat.VecDense
	z.MulVec(m.inv, d)
	return z.Norm(2)
}
