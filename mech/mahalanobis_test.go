package mech

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMixRow pins the mixer (C, outputs side by side in vector lanes) to
// the one-at-a-time Go product bit for bit (the noise of every seed must
// not move), for dimensions that are and are not multiples of the lanes.
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
		newMixer(sqrt, dim).row(got, row)
		for i := 0; i < dim; i++ {
			var want float64
			for j, v := range row {
				want += sqrt[i*dim+j] * v
			}
			if math.Float64bits(got[i]) != math.Float64bits(want) {
				t.Fatalf("dim %d, output %d: %v, want %v (bit for bit)", dim, i, got[i], want)
			}
		}
	}
}
