package knn

// #cgo CFLAGS: -O3
// #cgo LDFLAGS: -lm
// #include "q8.h"
//
// // select_flat passes every array as its own argument: cgo lets C see
// // Go memory only through pointers that are arguments themselves.
// static void select_flat(const uint8_t *e, const float *norm, const float *scale, const float *l1,
//                         const float *l2, const float *res, int nb, int groups, const float *max,
//                         const float *normlo, const float *normhi, const int8_t *q,
//                         const int32_t *qsum, const float *qscale, const float *ql1, const float *ql2,
//                         const float *qs, const float *qres, const float *qf, const float *qcs, int nq,
//                         int k, int cap, int32_t *out, int32_t *count, float *top, float *lo, const float *seed,
//                         int avx2) {
// 	xp_q8_matrix m = {e, norm, scale, l1, l2, res, nb, groups, {max[0], max[1], max[2], max[3], max[4]}, normlo, normhi};
// 	xp_q8_queries x = {q, qsum, qscale, ql1, ql2, qs, qres, qf, nq, qcs, seed};
// 	if (avx2) {
// 		xp_q8a_select(&m, &x, k, cap, out, count, top, lo);
// 	} else {
// 		xp_q8_select(&m, &x, k, cap, out, count, top, lo);
// 	}
// }
import "C"

import (
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The int8 path (CPU, x86-64 with AVX-512 VNNI; or with AVX2, int8-avx2)
// stores each candidate row e as s·E, E integer in [−L, L] (L = 127 on
// VNNI, 45 on AVX2: q8Layout), each query as t·Q likewise, computes the
// integer products ΣE·Q exactly, and keeps every row whose approximate
// score a = ‖e‖² − 2ê·q̂ minus its error bound δ is at most the k-th
// smallest a + δ; the kept rows are ranked exactly in float64. The bound
// δ, why no row of the true k nearest can be dropped, and the roundings
// of each kernel's order of evaluation are stated and proved in
// docs/mechanisms.md ("The int8 bound, exactly"); TestInt8BoundIsTight
// builds each bound's worst case and fails for a bound 3% too small.

// q8Cap is the most rows kept per query before an exact scan answers it,
// for k up to a quarter of it (q8CapFor: larger k keep 4k).
const q8Cap = 1024

func q8CapFor(k int) int { return max(q8Cap, 4*k) }

// q8MaxDim keeps |ΣE·Q| ≤ dim·127² exact in float32 (below 2²⁴).
const q8MaxDim = 1024

// q8Layout is how an int8 kernel reads the matrix and the queries: the
// integers' range [−level, level], the rows' bytes offset by off, blocks
// of rows (the kernel's register width) taken tile at a time, dimension
// groups of 4 padded to a multiple of groupStep, queries padded to a
// multiple of queries.
type q8Layout struct {
	avx2                                       bool // xp_q8a_select's layout, else xp_q8_select's
	level, off, rows, tile, groupStep, queries int
	// capScale multiplies the rows a query may keep (q8CapFor) before
	// its exact scan: the AVX2 grid's bound keeps hundreds.
	capScale int
}

var (
	// q8VNNI is xp_q8_select's layout (AVX-512 VNNI; also int8-torch's values).
	q8VNNI = q8Layout{level: 127, off: 128, rows: 16, tile: 3, groupStep: 1, queries: 8, capScale: 1}
	// q8AVX2 is xp_q8a_select's (q8.h: XP_Q8A_LEVEL).
	q8AVX2 = q8Layout{avx2: true, level: C.XP_Q8A_LEVEL, off: C.XP_Q8A_LEVEL, rows: 8, tile: 2, groupStep: 4, queries: 6, capScale: 4}
)

type q8 struct {
	lay        q8Layout
	groups, nb int
	e          []uint8
	norm       []float32 // ‖e‖² of each row, +∞ for the padding rows
	scale      []float32
	l1, l2     []float32 // ‖ê‖₁, ‖ê‖₂
	res        []float32 // ‖e − ê‖₂
	en         []float32 // ‖e‖₂ rounded up (the float32 bound's, refineF32)
	// normLo and normHi are norm rounded outward (outward), the AVX2
	// kernel's in place of norm (nil on the other layouts).
	normLo, normHi []float32
	// max is the largest of norm (finite), scale, l1, l2 and res over
	// the rows, in that order: the kernel's first, cheaper test.
	max [5]float32
	// scratch keeps the kernel's answer buffers (q8Scratch) between
	// searches: a batch's come to megabytes, which need not be allocated
	// and cleared for every batch.
	scratch sync.Pool
}

// q8Scratch is one worker's buffers for the kernel's answers; the kernel
// sets every value it reads, so they are reused as they are.
type q8Scratch struct {
	idx, count []int32
	top, los   []float32
}

// grow returns s with length n, reusing its array when it is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// q8Supported says whether this CPU runs the int8 kernel.
func q8Supported() bool { return C.xp_q8_supported() == 1 }

// q8aSupported says whether this CPU runs the AVX2 int8 kernel: it needs
// what the float32 kernel needs (AVX2 and FMA).
func q8aSupported() bool { return f32Supported() }

// newQ8 quantizes the n × dim matrix data row by row, laid out as lay.
func newQ8(data []float32, n, dim int, lay q8Layout) *q8 {
	g := ((dim+3)/4 + lay.groupStep - 1) / lay.groupStep * lay.groupStep
	per := lay.rows * lay.tile
	nb := (n + per - 1) / per * lay.tile
	nr := nb * lay.rows
	m := &q8{lay: lay, groups: g, nb: nb, e: make([]uint8, nr*g*4), norm: make([]float32, nr),
		scale: make([]float32, nr), l1: make([]float32, nr), l2: make([]float32, nr), res: make([]float32, nr),
		en: make([]float32, nr)}
	for i := range m.e {
		m.e[i] = uint8(lay.off) // zero
	}
	for i := n; i < nr; i++ {
		m.norm[i] = float32(math.Inf(1))
	}
	L := float64(lay.level)
	parallel((n+255)/256, func(c int) {
		for i := c * 256; i < min(n, (c+1)*256); i++ {
			row := data[i*dim : (i+1)*dim]
			var mx, n2 float64
			for _, v := range row {
				mx = math.Max(mx, math.Abs(float64(v)))
				n2 += float64(v) * float64(v)
			}
			s := float32(mx / L)
			var l1, l2, res float64
			b, r := i/lay.rows, i%lay.rows
			for j, v := range row {
				var x float64
				if s > 0 {
					x = math.Max(-L, math.Min(L, math.RoundToEven(float64(v)/float64(s))))
				}
				m.e[((b*g+j/4)*lay.rows+r)*4+j%4] = uint8(int(x) + lay.off)
				l1 += math.Abs(x) * float64(s)
				l2 += x * x * float64(s) * float64(s)
				res += (float64(v) - x*float64(s)) * (float64(v) - x*float64(s))
			}
			m.norm[i] = float32(n2)
			m.en[i] = up32(math.Sqrt(n2))
			m.scale[i] = s
			m.l1[i] = up32(l1)
			m.l2[i] = up32(math.Sqrt(l2))
			m.res[i] = up32(math.Sqrt(res))
		}
	})
	if lay.avx2 {
		m.normLo, m.normHi = outward(m.norm)
	}
	for i := 0; i < n; i++ {
		for j, a := range [][]float32{m.norm, m.scale, m.l1, m.l2, m.res} {
			if a[i] <= math.MaxFloat32 {
				m.max[j] = max(m.max[j], a[i])
			}
		}
	}
	return m
}

func workers() int { return runtime.GOMAXPROCS(0) }

// outward returns each norm v (float32 ‖e‖², itself within u of the
// true value) rounded outward by 10u: lo ≤ v·(1 − 10u) and hi ≥ v·(1 + 10u),
// each float32, so that they lie at least 8u‖e‖² from the true norm
// (+∞ stays +∞ in both).
func outward(norm []float32) (lo, hi []float32) {
	const u = 1.0 / (1 << 24)
	lo, hi = make([]float32, len(norm)), make([]float32, len(norm))
	for i, v := range norm {
		lo[i] = down32(float64(v) * (1 - 10*u))
		hi[i] = up32(float64(v) * (1 + 10*u))
	}
	return lo, hi
}

// down32 is x rounded down to float32.
func down32(x float64) float32 {
	f := float32(x)
	if float64(f) > x {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	return f
}

// up32 is x rounded up to float32.
func up32(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// q8Queries are queries quantized as the kernel reads them (q8.h's
// xp_q8_queries): nq (a multiple of 8) rows of stride int8 values, and per
// query Σq, the scale t and the weights of the bound.
type q8Queries struct {
	nq                       int
	q                        []int8
	sum                      []int32
	scale, l1, l2, s, res, f []float32
	cs                       []float32 // res + f rounded up: the AVX2 kernel's weight of ‖ê‖₂
}

// quantizeQueries quantizes the len(q)/dim queries into rows of stride
// values in [−level, level] (stride ≥ dim; the rest, and the rows past the
// last query, zero; nq a multiple of mult), each on its own and on every
// core.
func quantizeQueries(q []float32, dim, stride, level, mult int) *q8Queries {
	b := len(q) / dim
	nq := (b + mult - 1) / mult * mult
	L := float64(level)
	x := &q8Queries{nq: nq, q: make([]int8, nq*stride), sum: make([]int32, nq), scale: make([]float32, nq),
		l1: make([]float32, nq), l2: make([]float32, nq), s: make([]float32, nq), res: make([]float32, nq), f: make([]float32, nq),
		cs: make([]float32, nq)}
	quantize := func(i int) {
		row := q[i*dim : (i+1)*dim]
		var mx, l1 float64
		for _, v := range row {
			a := math.Abs(float64(v))
			if a > mx { // math.Max's NaN and signed-zero cases cannot arise: a ≥ +0
				mx = a
			}
			l1 += a
		}
		t := float32(mx / L)
		var sum int32
		var n2, l2, res float64
		for j, v := range row {
			var y float64
			if t > 0 {
				y = clampTo(math.RoundToEven(float64(v)/float64(t)), L)
			}
			x.q[i*stride+j] = int8(y)
			sum += int32(y)
			n2 += float64(v) * float64(v)
			l2 += y * y
			res += (float64(v) - y*float64(t)) * (float64(v) - y*float64(t))
		}
		x.sum[i], x.scale[i] = sum, t
		x.l1[i] = up32(1.01 * l1)
		x.l2[i] = up32(2.02 * math.Sqrt(n2))
		x.s[i] = up32(1.01 * float64(t))
		x.res[i] = up32(2.02 * math.Sqrt(res))
		x.f[i] = up32(16.0 / (1 << 24) * math.Sqrt(l2) * float64(t))
		x.cs[i] = up32(float64(x.res[i]) + float64(x.f[i]))
	}
	parallel((b+63)/64, func(c int) {
		for i := c * 64; i < min(b, (c+1)*64); i++ {
			quantize(i)
		}
	})
	return x
}

// selectRows returns, for each of the queries (rows of dim values), the
// indices the certificate keeps (nil where the buffer overflowed: scan
// it) and their lower bounds. norm, when not nil, replaces m.norm (+∞
// for excepted rows); seed, when not nil, holds each query's starting
// threshold (seedOf).
func (m *q8) selectRows(q []float32, dim, k int, norm, seed []float32) ([][]int32, [][]float32) {
	x := quantizeQueries(q, dim, m.groups*4, m.lay.level, m.lay.queries)
	b, nq, stride := len(q)/dim, x.nq, m.groups*4
	avx2 := C.int(0)
	if m.lay.avx2 {
		avx2 = 1
	}
	qq, qsum, qscale, ql1, ql2, qs, qres, qf, qcs := x.q, x.sum, x.scale, x.l1, x.l2, x.s, x.res, x.f, x.cs
	normLo, normHi := m.normLo, m.normHi
	if norm == nil {
		norm = m.norm
	} else if m.lay.avx2 {
		normLo, normHi = outward(norm)
	}
	if !m.lay.avx2 { // the VNNI kernel reads norm alone
		normLo, normHi = norm, norm
	}
	seed = padSeed(seed, nq)
	return kernelRows(&m.scratch, b, nq, m.lay.queries, q8CapFor(k)*m.lay.capScale, k, func(lo, cn, cp int, idx, count []int32, top, los []float32) {
		C.select_flat((*C.uint8_t)(unsafe.Pointer(&m.e[0])), (*C.float)(&norm[0]), (*C.float)(&m.scale[0]),
			(*C.float)(&m.l1[0]), (*C.float)(&m.l2[0]), (*C.float)(&m.res[0]), C.int(m.nb), C.int(m.groups), (*C.float)(&m.max[0]),
			(*C.float)(&normLo[0]), (*C.float)(&normHi[0]),
			(*C.int8_t)(unsafe.Pointer(&qq[lo*stride])), (*C.int32_t)(&qsum[lo]), (*C.float)(&qscale[lo]),
			(*C.float)(&ql1[lo]), (*C.float)(&ql2[lo]), (*C.float)(&qs[lo]), (*C.float)(&qres[lo]), (*C.float)(&qf[lo]), (*C.float)(&qcs[lo]), C.int(cn),
			C.int(k), C.int(cp), (*C.int32_t)(&idx[0]), (*C.int32_t)(&count[0]), (*C.float)(&top[0]), (*C.float)(&los[0]), seedAt(seed, lo), avx2)
	})
}

// kernelRows runs a scanning kernel over nq queries (the first b real),
// each worker a run of queries (a multiple of step) over every row with
// answer buffers from pool (q8Scratch; cp rows kept at most per query),
// and returns the rows each query kept (nil where its buffer overflowed:
// scan it) and their lower bounds.
func kernelRows(pool *sync.Pool, b, nq, step, cp, k int, call func(lo, cn, cp int, idx, count []int32, top, los []float32)) ([][]int32, [][]float32) {
	out, lows := make([][]int32, b), make([][]float32, b)
	chunk := max(step, (nq/step+workers()-1)/workers()*step)
	parallel((nq+chunk-1)/chunk, func(c int) {
		lo, hi := c*chunk, min(nq, (c+1)*chunk)
		cn := hi - lo
		sc, _ := pool.Get().(*q8Scratch)
		if sc == nil {
			sc = &q8Scratch{}
		}
		defer pool.Put(sc)
		sc.idx, sc.count, sc.top, sc.los = grow(sc.idx, cn*cp), grow(sc.count, cn), grow(sc.top, cn*k), grow(sc.los, cn*cp)
		call(lo, cn, cp, sc.idx, sc.count, sc.top, sc.los)
		total := 0
		for r := 0; r < cn && lo+r < b; r++ {
			total += max(0, int(sc.count[r]))
		}
		idx, los := make([]int32, 0, total), make([]float32, 0, total) // one allocation each for the run
		for r := 0; r < cn && lo+r < b; r++ {
			if n := int(sc.count[r]); n >= 0 {
				k := len(idx)
				idx, los = append(idx, sc.idx[r*cp:r*cp+n]...), append(los, sc.los[r*cp:r*cp+n]...)
				out[lo+r], lows[lo+r] = idx[k:len(idx):len(idx)], los[k:len(los):len(los)]
			}
		}
	})
	return out, lows
}

func (m *q8) rowNorms() []float32 { return m.norm }
func (m *q8) rowEN() []float32    { return m.en }
func (m *q8) seeds() bool         { return m.lay.avx2 }

// scanner is a kernel that keeps, while it scans every row, the rows its
// bound cannot rule out (q8, f32).
type scanner interface {
	// selectRows returns, for each query, the rows kept (nil: scan it
	// exactly) and their lower bounds; norm, when not nil, replaces
	// rowNorms (+∞ for excepted rows).
	selectRows(q []float32, dim, k int, norm, seed []float32) ([][]int32, [][]float32)
	// rowNorms is ‖e‖² of each row as the kernel holds them, and rowEN
	// ‖e‖ rounded up (f32's en).
	rowNorms() []float32
	rowEN() []float32
	// seeds says whether searchScan starts the kernel's thresholds from
	// the rows near its queries (SearchNear): int8-avx2's loose bound
	// keeps hundreds of rows a query on the way, which a seed halves;
	// the float32 kernel keeps about k rows either way, and so does the
	// VNNI kernel, for which seeding is not worth its cost
	// (BenchmarkSeed).
	seeds() bool
}

// refiner is a scanner whose kept rows are worth a float32 pass before
// the exact ranking (refineF32): int8-avx2's, hundreds a query.
type refiner interface {
	// refine returns the rows of cand (for query q of data's rows; lo
	// their lower bounds) that the float32 bound keeps; norm, when not
	// nil, replaces rowNorms.
	refine(data, q []float32, cand []int32, lo []float32, k int, norm []float32) []int32
}

func (m *q8) refine(data, q []float32, cand []int32, lo []float32, k int, norm []float32) []int32 {
	if !m.lay.avx2 { // VNNI's bound keeps about ten rows: nothing to gain
		return cand
	}
	if norm == nil {
		norm = m.norm
	}
	return refineF32(data, norm, m.en, q, cand, lo, k)
}

// searchScan answers SearchNear on a scanning kernel's path.
func (ix *Index) searchScan(sc scanner, q []float32, k int, except []bool, near [][]int32, ids []int32, dist []float64) {
	var norm []float32
	if except != nil {
		norm = append([]float32(nil), sc.rowNorms()...)
		for i, e := range except {
			if e {
				norm[i] = float32(math.Inf(1))
			}
		}
	}
	var seed []float32
	if near != nil && sc.seeds() {
		seed = make([]float32, len(near))
		n := norm
		if n == nil {
			n = sc.rowNorms()
		}
		parallel((len(near)+63)/64, func(c int) {
			for i := c * 64; i < min(len(near), (c+1)*64); i++ {
				seed[i] = seedOf(ix.data, n, sc.rowEN(), q[i*ix.dim:(i+1)*ix.dim], k, near[i])
			}
		})
	}
	rows, lows := sc.selectRows(q, ix.dim, k, norm, seed)
	b := len(rows)
	var fallbacks, kept atomic.Int64
	parallel(b, func(i int) {
		qv := q[i*ix.dim : (i+1)*ix.dim]
		if len(rows[i]) < k { // overflowed (nil), or fewer than k kept: impossible when the bound holds
			fallbacks.Add(1)
			ix.scan(qv, k, except, ids[i*k:(i+1)*k], dist[i*k:(i+1)*k])
			return
		}
		kept.Add(int64(len(rows[i])))
		cand := rows[i]
		if r, ok := sc.(refiner); ok && len(cand) > 4*k {
			cand = r.refine(ix.data, qv, cand, lows[i], k, norm)
		}
		ix.Rank(qv, cand, k, ids[i*k:(i+1)*k], dist[i*k:(i+1)*k])
	})
	ix.mu.Lock()
	ix.stats.Queries += int64(b)
	ix.stats.Fallbacks += fallbacks.Load()
	ix.stats.Kept += kept.Load()
	ix.mu.Unlock()
}

// Rank writes to ids and dist the k nearest to q of the rows cand (at
// least k), by exact distance then index, as every search ranks: the
// answer of a search whose candidates are known to include them.
func (ix *Index) Rank(q []float32, cand []int32, k int, ids []int32, dist []float64) {
	d := make([]float64, len(cand))
	j := 0
	for ; j+4 <= len(cand); j += 4 {
		d[j], d[j+1], d[j+2], d[j+3] = squaredDistances4(q, ix.Row(int(cand[j])), ix.Row(int(cand[j+1])), ix.Row(int(cand[j+2])), ix.Row(int(cand[j+3])))
	}
	for ; j < len(cand); j++ {
		d[j] = SquaredDistance(q, ix.Row(int(cand[j])))
	}
	o := make([]int, len(cand))
	for j := range o {
		o[j] = j
	}
	sort.Slice(o, func(a, b int) bool {
		if d[o[a]] != d[o[b]] {
			return d[o[a]] < d[o[b]]
		}
		return cand[o[a]] < cand[o[b]]
	})
	for j := 0; j < k; j++ {
		ids[j], dist[j] = cand[o[j]], math.Sqrt(d[o[j]])
	}
}

// clampTo is math.Max(-l, math.Min(l, x)) for x not NaN and l > 0,
// without their special cases (a query's hot loop; the same value, −0
// included).
func clampTo(x, l float64) float64 {
	if x > l {
		return l
	}
	if x < -l {
		return -l
	}
	return x
}
