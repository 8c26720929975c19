package mech

// #cgo CFLAGS: -O3 -std=c11
// #include "mix.h"
import "C"

import "unsafe"

// mixer multiplies noise rows by Σ_p^{1/2} (the Mahalanobis mechanism's
// noise, and Vickrey's with lambda) in C: out[i] = Σ_j sqrt[i·dim + j]·
// row[j], each sum in the order j = 0, 1, … with every product and sum
// rounded on its own, as the Go loop `s += sqrt[i*dim+j] * row[j]`
// rounds them on amd64 (GOAMD64=v1 fuses nothing), bit for bit
// (TestMixRow); the outputs are summed side by side in vector lanes,
// which the order of each sum does not see.
type mixer struct {
	t     []float64 // sqrt transposed: column i of sqrt is row i of t
	dim   int
	level int // the C version that runs (xp_mix_level)
}

// mixLevels lists the versions of the mixer this CPU runs, the widest
// last (0 generic, 1 AVX2, 2 AVX-512).
func mixLevels() []int {
	var l []int
	for i := 0; i <= int(C.xp_mix_level()); i++ {
		l = append(l, i)
	}
	return l
}

func newMixer(sqrt []float64, dim int) *mixer {
	m := &mixer{t: make([]float64, dim*dim), dim: dim, level: int(C.xp_mix_level())}
	for i := 0; i < dim; i++ {
		for j := 0; j < dim; j++ {
			m.t[j*dim+i] = sqrt[i*dim+j]
		}
	}
	return m
}

// row sets out (dim values) to sqrt times row; out and row must not
// overlap.
func (m *mixer) row(out, row []float64) {
	if m.dim == 0 {
		return
	}
	C.xp_mix_row((*C.double)(unsafe.Pointer(&m.t[0])), C.int(m.dim), (*C.double)(unsafe.Pointer(&row[0])), (*C.double)(unsafe.Pointer(&out[0])), C.int(m.level))
}
