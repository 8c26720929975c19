package mech

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/xp-nlp/xp/spec"
)

// Mahalanobis is the Mahalanobis mechanism (Xu et al., PrivateNLP 2020):
// noise Z = l·Σ_p^{1/2}·v with l and v as for Laplace, so the density is
// ∝ exp(−ε‖Σ_p^{−1/2} z‖) (not renormalised after the product), and the
// output is the Euclidean nearest candidate of φ(w) + Z. ε·d-private in
// the metric d(x, y) = ‖Σ_p^{−1/2}(x − y)‖.
//
// Σ is the sample covariance of the candidate matrix divided by the
// variance of all its entries (the convention of the most used public
// implementation, which makes Σ scale-free); Σ_p = λΣ + (1−λ)I.
// Σ_p^{1/2} comes from one symmetric eigendecomposition per space and λ.
type Mahalanobis struct {
	noisyNN
	lambda float64
	sqrt   []float64 // Σ_p^{1/2}, dim × dim row-major (symmetric)
	metric *mahalanobisMetric
}

// NewMahalanobis returns the mechanism at ε with λ ∈ [0, 1].
func NewMahalanobis(space *Space, eps, lambda float64, batch int) (*Mahalanobis, error) {
	if _, err := check("mahalanobis", eps, map[string]any{"lambda": lambda}); err != nil {
		return nil, err
	}
	s, err := space.sigmaSqrt(lambda)
	if err != nil {
		return nil, err
	}
	m := &Mahalanobis{lambda: lambda, sqrt: s, metric: &mahalanobisMetric{sqrt: s}}
	m.noisyNN = noisyNN{self: m, space: space, k: 1, batch: batch, eps: eps, noise: ellipticalNoise(lambda), pick: nearest, mix: ellipticalMix(s, space.Emb.Dim)}
	return m, nil
}

// ellipticalNoise names the Mahalanobis mechanism's noise at λ (noisyNN's
// noise), which Vickrey with λ draws too.
func ellipticalNoise(lambda float64) string {
	return "mahalanobis(lambda=" + strconv.FormatFloat(lambda, 'g', -1, 64) + ")"
}

// ellipticalMix multiplies one noise row in place by Σ_p^{1/2} (sqrt,
// dim × dim), using scratch (dim values): the Mahalanobis mechanism's
// noise, and Vickrey's with lambda (mixer computes it).
func ellipticalMix(sqrt []float64, dim int) func(z, scratch []float64) {
	m := newMixer(sqrt, dim)
	return func(z, scratch []float64) {
		copy(scratch, z)
		m.row(z, scratch)
	}
}

// sigmaPSqrt returns Σ_p^{1/2} = (λΣ + (1−λ)I)^{1/2} for the n × dim
// matrix data, with Σ its covariance divided by the variance of all its
// entries.
func sigmaPSqrt(data []float32, n, dim int, lambda float64) ([]float64, error) {
	if n < 2 {
		return nil, fmt.Errorf("mahalanobis: covariance of %d vectors", n)
	}
	mean := make([]float64, dim)
	var all, all2 float64
	for i := 0; i < n; i++ {
		for j, v := range data[i*dim : (i+1)*dim] {
			f := float64(v)
			mean[j] += f
			all += f
			all2 += f * f
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	cnt := float64(n * dim)
	variance := (all2 - all*all/cnt) / (cnt - 1)
	if !(variance > 0) {
		return nil, fmt.Errorf("mahalanobis: the vectors have no variance")
	}
	// Covariance through gonum's BLAS on the centred matrix, in blocks so
	// memory stays at one block of float64 rows.
	cov := mat.NewSymDense(dim, nil)
	const blk = 4096
	for lo := 0; lo < n; lo += blk {
		hi := min(n, lo+blk)
		x := mat.NewDense(hi-lo, dim, nil)
		for i := lo; i < hi; i++ {
			for j, v := range data[i*dim : (i+1)*dim] {
				x.Set(i-lo, j, float64(v)-mean[j])
			}
		}
		cov.SymRankK(cov, 1, x.T())
	}
	scale := lambda / (float64(n-1) * variance)
	sp := mat.NewSymDense(dim, nil)
	for i := 0; i < dim; i++ {
		for j := i; j < dim; j++ {
			v := scale * cov.At(i, j)
			if i == j {
				v += 1 - lambda
			}
			sp.SetSym(i, j, v)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sp, true) {
		return nil, fmt.Errorf("mahalanobis: eigendecomposition of Σ_p failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	out := make([]float64, dim*dim)
	for i := 0; i < dim; i++ {
		for j := 0; j < dim; j++ {
			var s float64
			for k, l := range vals {
				s += vecs.At(i, k) * math.Sqrt(math.Max(l, 0)) * vecs.At(j, k)
			}
			out[i*dim+j] = s
		}
	}
	return out, nil
}

// Name is the name of its noise (ellipticalNoise).
func (m *Mahalanobis) Name() string        { return ellipticalNoise(m.lambda) }
func (m *Mahalanobis) Notion() spec.Notion { return spec.MetricDP }

// mahalanobisKind registers the Mahalanobis mechanism (kind).
var mahalanobisKind = kind{name: "mahalanobis", search: true,
	build: func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		return NewMahalanobis(s, eps, v.Float("lambda"), o.Batch)
	}}

// Bound is ε·‖Σ_p^{−1/2}(φ(x) − φ(x′))‖.
func (m *Mahalanobis) Bound(x, x2 int) float64 {
	return m.eps * m.metric.distance(m.space, x, x2)
}
