package mech

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMixRow pins the mixer (C, outputs side by side in vector lanes) to
// the one-at-a-time Go product bit for bit (the noise of every seed must
// not move), for dimensions that are and are not multiples of the lanes,
// in every version this CPU runs.
func TestMixRow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dim := range []int{1, 3, 4, 7, 50, 299, 300} {
		sqrt := make([]float64, dim*dim)
		for i := range sqrt {
			sqrt[i] = r.NormFloat64() * math.Exp(4*r.NormFloat64())
		}
		row := make([]float64, dim)
		for i := range row {
			row[i] = r.NormFloat64() * math.Exp(4*r.NormFloat64())
		}
		got := make([]float64, dim)
		m := newMixer(sqrt, dim)
		for _, level := range mixLevels() {
			m.level = level
			m.row(got, row)
			for i := 0; i < dim; i++ {
				var want float64
				for j, v := range row {
					want += sqrt[i*dim+j] * v
				}
				if math.Float64bits(got[i]) != math.Float64bits(want) {
					t.Fatalf("version %d, dim %d, output %d: %v, want %v (bit for bit)", level, dim, i, got[i], want)
				}
			}
		}
	}
}

// BenchmarkMixRow times one 300-dimensional noise row through each
// version of the mixer this CPU runs (docs/performance.md).
func BenchmarkMixRow(b *testing.B) {
	const dim = 300
	r := rand.New(rand.NewPCG(1, 2))
	sqrt := make([]float64, dim*dim)
	for i := range sqrt {
		sqrt[i] = r.NormFloat64()
	}
	row, out := make([]float64, dim), make([]float64, dim)
	for i := range row {
		row[i] = r.NormFloat64()
	}
	m := newMixer(sqrt, dim)
	for _, level := range mixLevels() {
		b.Run([]string{"generic", "avx2", "avx512"}[level], func(b *testing.B) {
			m.level = level
			for i := 0; i < b.N; i++ {
				m.row(out, row)
			}
		})
	}
}
