package mech

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/xp-nlp/xp/mech/knn"
)

// Each mechanism states the bound its guarantee puts on the privacy loss
// between two inputs, Bound(x, x′): for every output y,
//
//	ln Pr[M(x) = y] − ln Pr[M(x′) = y] ≤ Bound(x, x′),
//
// +Inf where it promises nothing for the pair. A no-guarantee variant
// (Vickrey with exclude_input, SanText+) states the bound of the
// mechanism it varies, which it does not keep: the privacy audit
// (analysis dp-audit) shows by how much.

// Bound is ε·‖φ(x) − φ(x′)‖.
func (m *Laplace) Bound(x, x2 int) float64 { return m.eps * euclid(m.space, x, x2) }

// Bound is ε·d with d Euclidean, or the Mahalanobis metric with lambda.
func (v *Vickrey) Bound(x, x2 int) float64 {
	if v.p.Mahalanobis {
		return v.eps * v.metric.distance(v.space, x, x2)
	}
	return v.eps * euclid(v.space, x, x2)
}

// Bound is ε·‖Σ_p^{−1/2}(φ(x) − φ(x′))‖.
func (m *Mahalanobis) Bound(x, x2 int) float64 {
	return m.eps * m.metric.distance(m.space, x, x2)
}

// Bound is ε·‖φ(x) − φ(x′)‖ (SanText, TEM; SanText+ keeps it only
// between sensitive words).
func (m *SanText) Bound(x, x2 int) float64 { return m.eps * euclid(m.space, x, x2) }

// Bound is ε between two inputs that share an output set (neither a kept
// CusText+ stopword), +Inf otherwise: CusText promises nothing between
// inputs of different sets.
func (m *CusText) Bound(x, x2 int) float64 {
	if !m.input(x) || !m.input(x2) || m.mapping.Of[int32(x)] != m.mapping.Of[int32(x2)] {
		return math.Inf(1)
	}
	return m.eps
}

// input reports whether row x is privatized: an input word (a task word
// with a vector, which has an output set), not a kept CusText+ stopword.
// A balanced or conservative set's members that are not task words have
// a set too but are never inputs.
func (m *CusText) input(x int) bool {
	_, ok := m.probs[int32(x)]
	return ok && !m.stop[m.space.Emb.Words[x]]
}

// Peers are the inputs CusText's guarantee relates to x: the input words
// mapped to x's output set (x included; none when x is not an input), in
// increasing row order.
func (m *CusText) Peers(x int) []int {
	if !m.input(x) {
		return nil
	}
	sx := m.mapping.Of[int32(x)]
	var out []int
	for r, si := range m.mapping.Of {
		if si == sx && m.input(int(r)) {
			out = append(out, int(r))
		}
	}
	slices.Sort(out)
	return out
}

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
