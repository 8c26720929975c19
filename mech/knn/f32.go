package knn

// #cgo CFLAGS: -O3
// #cgo LDFLAGS: -lm
// #include "f32.h"
//
// // f32_flat passes every array as its own argument: cgo lets C see Go
// // memory only through pointers that are arguments themselves.
// static void f32_flat(const float *f, const float *norm, const float *en, int nb, int dim, float max0, float max1,
//                      const float *q, const float *qc, float c1, int nq, int k, int cap, int32_t *out,
//                      int32_t *count, float *top, float *lo, const float *seed) {
// 	xp_f32_matrix m = {f, norm, en, nb, dim, {max0, max1}};
// 	xp_f32_queries x = {q, qc, c1, nq, seed};
// 	xp_f32_select(&m, &x, k, cap, out, count, top, lo);
// }
import "C"

import (
	"math"
	"sync"
	"unsafe"
)

// The float32 kernel (CPU, x86-64 with AVX2 and FMA; ScoringFloat32Kernel):
// xp's own scan in float32 for CPUs without AVX-512 VNNI, where int8
// gains nothing (an AVX2 int8 step is no faster than a float32 FMA:
// docs/performance.md). Each score a = ‖e‖² − 2e·q is computed with e·q
// one FMA chain over the dimensions in order and a = fl(‖e‖²) − 2e·q in
// one more rounding, so, with u = 2⁻²⁴ and γ = d·u/(1 − d·u),
//
//	|a − (‖e‖² − 2e·q)| ≤ 2γ‖e‖‖q‖ + u‖e‖² + u(‖e‖² + 2‖e‖‖q‖)(1 + γ),
//
// and the kernel takes δ = 2·1.01·(2.02u‖e‖² + (2γ + 2.02u)‖e‖‖q‖) (a
// row's ‖e‖ rounded up, the query's weight rounded up): twice the bound,
// the rest of it covering δ's own rounding. As the int8 kernel does
// (q8.go), it keeps every row whose lower bound a − δ is at most the k-th
// smallest upper bound a + δ while it scans, testing first at the
// matrix's largest norm, and the kept rows are ranked exactly in
// float64: the answer is Naive's, with no certificate to fail (a query
// whose kept set outgrows its buffer is scanned exactly). No score
// matrix is written: the float32 path's products, top-k and copies are
// one pass.

type f32 struct {
	nb, dim  int
	f        []float32 // blocks of 8 rows, dimension-major
	norm, en []float32 // fl(‖e‖²) (+∞ past the last row), ‖e‖ rounded up
	max      [2]float32
	scratch  sync.Pool
}

// f32Supported says whether this CPU runs the float32 kernel.
func f32Supported() bool { return C.xp_f32_supported() == 1 }

// newF32 lays the n × dim matrix data out in blocks.
func newF32(data []float32, n, dim int) *f32 {
	nb := (n + 15) / 16 * 2 // the kernel takes blocks of 8 rows in twos
	m := &f32{nb: nb, dim: dim, f: make([]float32, nb*8*dim), norm: make([]float32, nb*8), en: make([]float32, nb*8)}
	for i := n; i < nb*8; i++ {
		m.norm[i] = float32(math.Inf(1))
	}
	parallel((n+255)/256, func(c int) {
		for i := c * 256; i < min(n, (c+1)*256); i++ {
			row := data[i*dim : (i+1)*dim]
			var n2 float64
			b, r := i/8, i%8
			for j, v := range row {
				m.f[(b*dim+j)*8+r] = v
				n2 += float64(v) * float64(v)
			}
			m.norm[i] = float32(n2)
			m.en[i] = up32(math.Sqrt(n2))
		}
	})
	for i := 0; i < n; i++ {
		m.max[0] = max(m.max[0], m.norm[i])
		m.max[1] = max(m.max[1], m.en[i])
	}
	return m
}

func (m *f32) rowNorms() []float32 { return m.norm }
func (m *f32) rowEN() []float32    { return m.en }
func (m *f32) seeds() bool         { return false }

// f32Weights are the float32 bound's weights: c1 of a row's norm (one
// constant) and that of its en for the query q of dim values.
func f32Weights(q []float32) (c1, qc float32) {
	const u = 1.0 / (1 << 24)
	dim := len(q)
	gamma := float64(dim) * u / (1 - float64(dim)*u)
	var n2 float64
	for _, v := range q {
		n2 += float64(v) * float64(v)
	}
	return up32(2 * 1.01 * 2.02 * u), up32(2 * 1.01 * (2*gamma + 2.02*u) * math.Sqrt(n2) * (1 + 1e-6))
}

// selectRows is q8.selectRows for the float32 kernel.
func (m *f32) selectRows(q []float32, dim, k int, norm, seed []float32) ([][]int32, [][]float32) {
	b := len(q) / dim
	nq := (b + 5) / 6 * 6
	qq := make([]float32, nq*dim)
	copy(qq, q)
	var c1 float32
	qc := make([]float32, nq)
	for i := 0; i < b; i++ {
		c1, qc[i] = f32Weights(q[i*dim : (i+1)*dim])
	}
	if norm == nil {
		norm = m.norm
	}
	seed = padSeed(seed, nq)
	return kernelRows(&m.scratch, b, nq, 6, q8CapFor(k), k, func(lo, cn, cp int, idx, count []int32, top, los []float32) {
		C.f32_flat((*C.float)(&m.f[0]), (*C.float)(&norm[0]), (*C.float)(&m.en[0]), C.int(m.nb), C.int(m.dim),
			C.float(m.max[0]), C.float(m.max[1]), (*C.float)(&qq[lo*dim]), (*C.float)(&qc[lo]), C.float(c1), C.int(cn),
			C.int(k), C.int(cp), (*C.int32_t)(&idx[0]), (*C.int32_t)(&count[0]), (*C.float)(&top[0]), (*C.float)(&los[0]),
			seedAt(seed, lo))
	})
}

// refineF32 returns, of the rows cand (at least k) of data (row-major,
// len(q) values a row) with lower bounds lo on their scores (a kernel's),
// those whose float32 score's bound (the float32 kernel's, norm and en
// indexed by row) cannot rule them out of q's k nearest: a superset of
// them, in cand's order, that the exact ranking then orders. It scores
// in float32 only the rows whose lower bound is at most the k-th
// smallest float32 upper bound so far, starting from the k lowest. Where
// a kernel's own bound is loose (int8-avx2) this leaves the float64
// ranking a few rows instead of hundreds.
func refineF32(data []float32, norm, en, q []float32, cand []int32, lo []float32, k int) []int32 {
	c1, qc := f32Weights(q)
	out := make([]int32, len(cand))
	scratch := make([]float32, len(cand))
	n := C.xp_f32_refine((*C.float)(&data[0]), C.int(len(q)), (*C.float)(&norm[0]), (*C.float)(&en[0]),
		(*C.float)(&q[0]), C.float(qc), C.float(c1), (*C.int32_t)(unsafe.Pointer(&cand[0])), (*C.float)(&lo[0]), C.int(len(cand)), C.int(k),
		(*C.int32_t)(unsafe.Pointer(&out[0])), (*C.float)(&scratch[0]))
	return out[:n]
}

// seedOf is the threshold the rows near (nil: none) give a kernel's
// scan of query q for k neighbours (xp_f32_seed): the k-th smallest
// float32 upper bound on their scores, norm and en indexed by row (+∞
// norm: an excepted row, never counted), or MaxFloat32 where they are
// fewer than k.
func seedOf(data, norm, en, q []float32, k int, near []int32) float32 {
	if len(near) < k || k > 64 {
		return math.MaxFloat32
	}
	c1, qc := f32Weights(q)
	return float32(C.xp_f32_seed((*C.float)(&data[0]), C.int(len(q)), (*C.float)(&norm[0]), (*C.float)(&en[0]),
		(*C.float)(&q[0]), C.float(qc), C.float(c1), (*C.int32_t)(unsafe.Pointer(&near[0])), C.int(len(near)), C.int(k)))
}

// padSeed returns seed (one per query, or nil) for nq padded queries:
// MaxFloat32 past the last.
func padSeed(seed []float32, nq int) []float32 {
	if seed == nil {
		return nil
	}
	p := make([]float32, nq)
	for i := copy(p, seed); i < nq; i++ {
		p[i] = math.MaxFloat32
	}
	return p
}

// seedAt is the kernel's argument for the queries from lo on: NULL
// without seeds.
func seedAt(seed []float32, lo int) *C.float {
	if seed == nil {
		return nil
	}
	return (*C.float)(&seed[lo])
}
