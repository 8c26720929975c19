// Package knn owns exact nearest-neighbour search of a batch of query
// vectors against a fixed candidate matrix: the search every mechanism in
// mech spends its time in.
//
// A search scores every candidate approximately, keeps the candidates
// that a rigorous bound on the approximation's error cannot rule out,
// and ranks those exactly: each kept candidate's distance is recomputed
// in float64 from the stored float32 values and candidates are ordered by
// (distance, index). The result is therefore exactly what a naive loop in
// float64 over all candidates gives (Naive), ties broken by the lower
// index, whichever path scored.
//
// Five paths score (Scoring; ScoringAuto picks by device, AutoScoring):
//
//   - int8 (CPU, x86-64 with AVX-512 VNNI; q8.go, q8.c): rows and queries
//     quantized to int8 with per-row and per-query scales, scored by a
//     kernel of xp's own that keeps, while it scans, every row whose
//     lower bound is within reach of the k-th best upper bound. No
//     certificate can fail; a query whose kept set outgrows its buffer
//     (over a thousand rows within the bound, e.g. duplicated vectors) is
//     scanned exactly.
//   - int8-avx2 (CPU, x86-64 with AVX2 and FMA, without VNNI; q8.go,
//     q8.c): the same on a coarser grid ([−45, 45]), whose int16 sums
//     AVX2 can add four at a time; its looser bound keeps hundreds of
//     rows a query, which the float32 kernel's bound narrows
//     (refineF32) before the exact ranking.
//   - float32-kernel (CPU, x86-64 with AVX2 and FMA; f32.go, f32.c): the
//     same scan in float32, each score's rounding bounded, so that it too
//     keeps what the bound cannot rule out and no certificate can fail.
//   - float32 (any device; the GPU's path): blocked matrix products
//     through libtorch, scores ‖e‖² − 2e·q for a block of queries
//     against every candidate, then a top-k per query as the candidate
//     set (on a GPU by chunk minima first: smallestK), and a certificate
//     (a rigorous bound on the float32 rounding error of every score)
//     that no vector outside it can be nearer. A query whose certificate
//     fails (near-ties at the boundary, duplicate vectors) is searched
//     again by an exact float64 scan. The bound assumes float32 products;
//     New checks a GPU's (fullFloat32) and takes int8-torch where they
//     are TF32.
//   - int8-torch (any device; a GPU's where its float32 products are
//     TF32; q8torch.go): the int8
//     values, their products computed exactly through libtorch (_int_mm
//     on CUDA where it exists, else float32 products of the int8 values,
//     exact whether or not TF32 is on), per-row bounds on the device, the
//     query's kc smallest lower bounds and its k-th smallest upper bound
//     taken there as the certificate; where it fails, more rows are
//     taken, then the exact scan answers.
//
// An Index may be searched from several goroutines at once (mech overlaps
// one batch's search with the next batch's noise).
package knn

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/torchrt"
)

// Index holds the candidate matrix on a device.
type Index struct {
	n, dim  int
	data    []float32 // n × dim, the float32 values every distance is computed from
	norm2   []float64 // exact ‖e‖² of each row
	maxNorm float64
	device  gotch.Device
	budget  int64
	et2     *ts.Tensor // −2·Eᵀ, dim × n (float32)
	enorm   *ts.Tensor // 1 × n float32 ‖e‖²
	q8      *q8        // the int8 kernel's matrix (nil: another path scores)
	q8t     *q8t       // the int8 path through libtorch's matrix
	f32     *f32       // the float32 kernel's matrix
	tf32    bool       // ScoringAuto took q8t because the device's float32 products are TF32

	mu     sync.Mutex
	stats  Stats
	closed bool
}

// Stats counts how searches went.
type Stats struct {
	Queries   int64 // queries answered
	Fallbacks int64 // queries whose certificate failed and that were rescanned exactly
	Kept      int64 // rows the int8 path's bound kept and ranked exactly, over all its queries
	// Searching is the wall time spent in searches (summed over
	// concurrent ones): what a privatization's time is beside it is the
	// caller's (noise, choosing among the neighbours).
	Searching time.Duration
}

// Scoring names how an index scores candidates before the exact ranking.
// Every choice gives the same answer, bit for bit.
type Scoring string

const (
	// ScoringAuto is int8 where the CPU runs it, otherwise float32.
	ScoringAuto Scoring = ""
	// ScoringFloat32 scores with libtorch float32 products (any device).
	ScoringFloat32 Scoring = "float32"
	// ScoringInt8 scores with the int8 kernel (CPU with AVX-512 VNNI, at
	// most 1,024 dimensions).
	ScoringInt8 Scoring = "int8"
	// ScoringFloat32Kernel scores with xp's float32 kernel (CPU, x86-64
	// with AVX2 and FMA; f32.go): the CPU's path without AVX-512 VNNI.
	ScoringFloat32Kernel Scoring = "float32-kernel"
	// ScoringInt8Torch scores the same int8 values with exact products
	// through libtorch (any device, at most 1,024 dimensions; q8torch.go):
	// the GPU's path.
	ScoringInt8Torch Scoring = "int8-torch"
	// ScoringInt8AVX2 scores with the int8 kernel's AVX2 version (CPU,
	// x86-64 with AVX2, at most 1,024 dimensions; q8.go): values in
	// [−45, 45], whose int16 sums vpmaddubsw can add four at a time.
	ScoringInt8AVX2 Scoring = "int8-avx2"
)

// CPUScorings are the paths that may score an index on a CPU, fastest
// first where the CPU runs them.
func CPUScorings() []Scoring {
	return []Scoring{ScoringInt8, ScoringInt8AVX2, ScoringFloat32Kernel, ScoringFloat32}
}

// Int8Available says whether this CPU runs the int8 scoring kernel, and
// if not, why.
func Int8Available() (bool, string) {
	if !q8Supported() {
		return false, "the CPU lacks AVX-512 VNNI (or is not x86-64)"
	}
	return true, "AVX-512 VNNI"
}

// AutoScoring is the path ScoringAuto takes for an index of dim
// dimensions on device: on a CPU the int8 kernel where it runs, else its
// AVX2 version, else the float32 kernel (past q8MaxDim dimensions);
// float32 products otherwise, a GPU's included (on an H100 the int8
// path's passes over the scores cost more than its products save:
// docs/gpu.md). New takes the int8 path through libtorch instead where
// the device's float32 products turn out not to be float32 (TF32).
func AutoScoring(device gotch.Device, dim int) Scoring {
	ok, _ := Int8Available()
	switch {
	case device != gotch.CPU:
		return ScoringFloat32
	case ok && dim <= q8MaxDim:
		return ScoringInt8
	case q8aSupported() && dim <= q8MaxDim:
		return ScoringInt8AVX2
	case f32Supported():
		return ScoringFloat32Kernel
	}
	return ScoringFloat32
}

// fullFloat32 says whether float32 products on device keep float32's
// precision, which the float32 path's certificate assumes: it multiplies
// a 128 × 128 matrix of 1 + 2⁻¹² by the identity, which float32 returns
// unchanged and TF32 (inputs rounded to 11 significant bits, as cuBLAS
// does where a process allows it, e.g. TORCH_ALLOW_TF32_CUBLAS_OVERRIDE)
// returns as 1. New asks only of GPUs (a CPU's products are float32).
func fullFloat32(device gotch.Device) (bool, error) {
	const m = 128
	x := float32(1 + 1.0/(1<<12))
	a, id := make([]float32, m*m), make([]float32, m*m)
	for i := range a {
		a[i] = x
	}
	for i := range m {
		id[i*m+i] = 1
	}
	got := make([]float32, m*m)
	err := torchrt.Do(func() error {
		var s torchrt.Scope
		defer s.Drop()
		var t [2]*ts.Tensor
		for j, v := range [][]float32{a, id} {
			c, err := s.Keep(ts.NewTensorFromData(v, []int64{m, m}))
			if err != nil {
				return err
			}
			if t[j], err = s.Keep(c.To(device, false)); err != nil {
				return err
			}
		}
		p, err := s.Keep(t[0].Mm(t[1], false))
		if err != nil {
			return err
		}
		if p, err = s.Keep(p.To(gotch.CPU, false)); err != nil {
			return err
		}
		return p.CopyData(got, m*m)
	})
	if err != nil {
		return false, fmt.Errorf("knn: float32 products on %v: %w", torchrt.DeviceString(device), torchrt.Clean(err))
	}
	for _, v := range got {
		if v != x {
			return false, nil
		}
	}
	return true, nil
}

// Options tune an index.
type Options struct {
	// Budget bounds the bytes of one block of scores (queries × candidates
	// × 4); 0 means 256 MiB.
	Budget int64
	// Scoring chooses the scoring path (ScoringAuto: the fastest here).
	Scoring Scoring
}

// Describe says how an index scores on the CPU and, where cuda is set, on
// the first GPU: there it builds a small index to see how the int8
// path's products are computed (by _int_mm or float32 products).
func Describe(cuda bool) string {
	ok, why := Int8Available()
	cpu := "int8 kernel (" + why + ") on CPU"
	switch {
	case !ok && q8aSupported():
		cpu = "int8 kernel (AVX2, 45 levels, float32-refined) on CPU (the VNNI kernel is unavailable: " + why + "; float32 kernel past " + fmt.Sprint(q8MaxDim) + " dimensions)"
	case !ok:
		cpu = "float32 products on CPU (neither kernel runs: " + why + "; no AVX2 and FMA)"
	}
	if !cuda {
		return cpu
	}
	const n, dim = 64, 8
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(i%17) - 8
	}
	ix, err := New(data, n, dim, gotch.CudaBuilder(0), Options{})
	if err != nil {
		return cpu + "; CUDA: " + err.Error()
	}
	defer ix.Close()
	return cpu + "; CUDA: " + string(ix.Scoring()) + " (" + ix.Products() + ")"
}

// New puts the n × dim row-major matrix data on device. data must not be
// modified while the index is in use.
func New(data []float32, n, dim int, device gotch.Device, opt Options) (*Index, error) {
	if n <= 0 || dim <= 0 || len(data) != n*dim {
		return nil, fmt.Errorf("knn: %d values for a %d × %d matrix", len(data), n, dim)
	}
	ix := &Index{n: n, dim: dim, data: data, device: device, budget: opt.Budget}
	if ix.budget <= 0 {
		ix.budget = 256 << 20
	}
	if sc := cmp.Or(opt.Scoring, AutoScoring(device, dim)); sc == ScoringFloat32 && device != gotch.CPU {
		full, err := fullFloat32(device)
		switch {
		case err != nil:
			return nil, err
		case !full && opt.Scoring == ScoringFloat32:
			return nil, fmt.Errorf("knn: float32 scoring unavailable: float32 products on %v are computed in TF32, which its certificate does not bound (int8-torch's products are exact either way)", torchrt.DeviceString(device))
		case !full && dim <= q8MaxDim:
			opt.Scoring = ScoringInt8Torch
			ix.tf32 = true
		case !full:
			return nil, fmt.Errorf("knn: no exact scoring on %v: its float32 products are computed in TF32 and int8-torch takes at most %d dimensions (%d)", torchrt.DeviceString(device), q8MaxDim, dim)
		}
	}
	switch ok, why := Int8Available(); {
	case opt.Scoring == ScoringInt8 && AutoScoring(device, dim) != ScoringInt8:
		if ok {
			why = fmt.Sprintf("the index is on %v with %d dimensions (int8: CPU, at most %d)", torchrt.DeviceString(device), dim, q8MaxDim)
		}
		return nil, fmt.Errorf("knn: int8 scoring unavailable: %s", why)
	case opt.Scoring == ScoringInt8 || opt.Scoring == ScoringAuto && AutoScoring(device, dim) == ScoringInt8:
		ix.q8 = newQ8(data, n, dim, q8VNNI)
	case opt.Scoring == ScoringInt8AVX2 && (device != gotch.CPU || !q8aSupported() || dim > q8MaxDim):
		return nil, fmt.Errorf("knn: int8-avx2 scoring unavailable: it runs on the CPU with AVX2 and FMA, at most %d dimensions (the index is on %v, %d dimensions)", q8MaxDim, torchrt.DeviceString(device), dim)
	case opt.Scoring == ScoringInt8AVX2 || opt.Scoring == ScoringAuto && AutoScoring(device, dim) == ScoringInt8AVX2:
		ix.q8 = newQ8(data, n, dim, q8AVX2)
	case opt.Scoring == ScoringFloat32Kernel && (device != gotch.CPU || !f32Supported()):
		return nil, fmt.Errorf("knn: float32 kernel unavailable: it runs on the CPU with AVX2 and FMA (the index is on %v)", torchrt.DeviceString(device))
	case opt.Scoring == ScoringFloat32Kernel || opt.Scoring == ScoringAuto && AutoScoring(device, dim) == ScoringFloat32Kernel:
		ix.f32 = newF32(data, n, dim)
	case opt.Scoring == ScoringInt8Torch && dim > q8MaxDim:
		return nil, fmt.Errorf("knn: int8 scoring unavailable: %d dimensions (at most %d)", dim, q8MaxDim)
	case opt.Scoring == ScoringInt8Torch || opt.Scoring == ScoringAuto && AutoScoring(device, dim) == ScoringInt8Torch:
		var err error
		if ix.q8t, err = newQ8T(data, n, dim, device); err != nil {
			return nil, err
		}
	case opt.Scoring != ScoringAuto && opt.Scoring != ScoringFloat32:
		return nil, fmt.Errorf("knn: unknown scoring %q (want %q, %q, %q, %q or %q)", opt.Scoring, ScoringFloat32, ScoringFloat32Kernel, ScoringInt8, ScoringInt8AVX2, ScoringInt8Torch)
	}
	if ix.q8 != nil || ix.q8t != nil || ix.f32 != nil {
		return ix, nil // the float32 path's tensors are not needed
	}
	ix.norm2 = make([]float64, n)
	en := make([]float32, n)
	for i := 0; i < n; i++ {
		var s float64
		for _, v := range data[i*dim : (i+1)*dim] {
			s += float64(v) * float64(v)
		}
		ix.norm2[i], en[i] = s, float32(s)
		ix.maxNorm = math.Max(ix.maxNorm, math.Sqrt(s))
	}
	err := torchrt.Do(func() error {
		e, err := ts.NewTensorFromData(data, []int64{int64(n), int64(dim)})
		if err != nil {
			return err
		}
		e, err = e.To(device, true)
		if err != nil {
			return err
		}
		et, err := e.Transpose(0, 1, true)
		if err != nil {
			return err
		}
		m2 := ts.FloatScalar(-2)
		defer m2.Drop()
		et2, err := et.MulScalar(m2, true)
		if err != nil {
			return err
		}
		if ix.et2, err = et2.Contiguous(true); err != nil {
			return err
		}
		nt, err := ts.NewTensorFromData(en, []int64{1, int64(n)})
		if err != nil {
			return err
		}
		ix.enorm, err = nt.To(device, true)
		return err
	})
	if err != nil {
		ix.Close()
		return nil, fmt.Errorf("knn: build index on %v: %w", torchrt.DeviceString(device), torchrt.Clean(err))
	}
	return ix, nil
}

// Len is the number of candidates.
func (ix *Index) Len() int { return ix.n }

// Dim is the vector dimension.
func (ix *Index) Dim() int { return ix.dim }

// Close frees the device memory.
func (ix *Index) Close() {
	for _, t := range []*ts.Tensor{ix.et2, ix.enorm} {
		if t != nil {
			t.Drop()
		}
	}
	ix.et2, ix.enorm = nil, nil
	if ix.q8t != nil {
		ix.q8t.close()
	}
	ix.closed = true
}

// Scoring is the path that scores this index's candidates.
func (ix *Index) Scoring() Scoring {
	switch {
	case ix.q8 != nil && ix.q8.lay.avx2:
		return ScoringInt8AVX2
	case ix.q8 != nil:
		return ScoringInt8
	case ix.q8t != nil:
		return ScoringInt8Torch
	case ix.f32 != nil:
		return ScoringFloat32Kernel
	}
	return ScoringFloat32
}

// UsesNear says whether SearchNear's rows near the queries change how
// this index searches (int8-avx2's scan starts from them); on the other
// paths they are read only to be checked.
func (ix *Index) UsesNear() bool {
	switch {
	case ix.q8 != nil:
		return ix.q8.seeds()
	case ix.f32 != nil:
		return ix.f32.seeds()
	}
	return false
}

// Products says how the scoring path computes its products: for
// ScoringInt8Torch, whether by _int_mm or by float32 products of the int8
// values (and why not _int_mm).
func (ix *Index) Products() string {
	switch {
	case ix.q8 != nil && ix.q8.lay.avx2:
		return "int8 kernel (AVX2)"
	case ix.q8 != nil:
		return "int8 kernel (AVX-512 VNNI)"
	case ix.q8t != nil && ix.tf32:
		return ix.q8t.products() + "; taken because this device's float32 products are TF32"
	case ix.q8t != nil:
		return ix.q8t.products()
	case ix.f32 != nil:
		return "float32 kernel (AVX2, FMA)"
	}
	return "float32 products"
}

// Stats returns the counts so far.
func (ix *Index) Stats() Stats {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.stats
}

// Row returns candidate i's vector.
func (ix *Index) Row(i int) []float32 { return ix.data[i*ix.dim : (i+1)*ix.dim] }

// Search returns, for each of the len(q)/dim queries, the k nearest
// candidates in increasing Euclidean distance (ties: lower index first) and
// their distances, as rows of k in ids and dist.
func (ix *Index) Search(q []float32, k int) (ids []int32, dist []float64, err error) {
	return ix.SearchExcept(q, k, nil)
}

// SearchExcept is Search over the candidates i with except[i] false
// (except nil: every candidate; otherwise of length Len()). The answer
// is exactly Search's over the matrix without the excepted rows, indices
// kept: the excepted rows' scores are +∞ in the float32 stage, and the
// certificate and the exact scan skip them. k may not exceed the
// candidates left.
func (ix *Index) SearchExcept(q []float32, k int, except []bool) (ids []int32, dist []float64, err error) {
	return ix.SearchNear(q, k, except, nil)
}

// SearchNear is SearchExcept told, for each query i, rows near[i] (nil,
// or of any length, in any order) the caller expects among its nearest:
// a draw's word and that word's nearest candidates. int8-avx2's kernel
// then starts the query's threshold at the k-th smallest bound on their
// scores instead of at +∞, and keeps fewer rows while it scans (the
// other paths do without: scanner.seeds). The answer is SearchExcept's
// whatever near holds (rows repeated or excepted are counted out); only
// the time differs. near is nil or has a slice per query.
func (ix *Index) SearchNear(q []float32, k int, except []bool, near [][]int32) (ids []int32, dist []float64, err error) {
	if len(q)%ix.dim != 0 {
		return nil, nil, fmt.Errorf("knn: %d query values is not a multiple of dimension %d", len(q), ix.dim)
	}
	if near != nil {
		if len(near) != len(q)/ix.dim {
			return nil, nil, fmt.Errorf("knn: rows near %d queries for %d queries", len(near), len(q)/ix.dim)
		}
		for _, rows := range near {
			for _, r := range rows {
				if r < 0 || int(r) >= ix.n {
					return nil, nil, fmt.Errorf("knn: row %d near a query, of %d candidates", r, ix.n)
				}
			}
		}
	}
	avail := ix.n
	if except != nil {
		if len(except) != ix.n {
			return nil, nil, fmt.Errorf("knn: %d exceptions for %d candidates", len(except), ix.n)
		}
		for _, e := range except {
			if e {
				avail--
			}
		}
	}
	if k <= 0 || k > avail {
		return nil, nil, fmt.Errorf("knn: k = %d with %d candidates", k, avail)
	}
	if ix.closed {
		return nil, nil, errors.New("knn: index closed")
	}
	b := len(q) / ix.dim
	ids, dist = make([]int32, b*k), make([]float64, b*k)
	t0 := time.Now()
	defer func() {
		ix.mu.Lock()
		ix.stats.Searching += time.Since(t0)
		ix.mu.Unlock()
	}()
	if ix.q8 != nil {
		ix.searchScan(ix.q8, q, k, except, near, ids, dist)
		return ids, dist, nil
	}
	if ix.f32 != nil {
		ix.searchScan(ix.f32, q, k, except, near, ids, dist)
		return ids, dist, nil
	}
	if ix.q8t != nil {
		if err := ix.searchQ8T(q, k, avail, except, ids, dist); err != nil {
			return nil, nil, err
		}
		return ids, dist, nil
	}
	kc := min(avail, k+max(8, k)) // candidates taken from the float32 top-k
	block := int(max(1, ix.budget/(4*int64(ix.n))))
	var fallbacks []int
	for lo := 0; lo < b; lo += block {
		hi := min(b, lo+block)
		cand, err := ix.topk(q[lo*ix.dim:hi*ix.dim], hi-lo, kc, except)
		if err != nil {
			return nil, nil, err
		}
		fb := ix.rerank(q, lo, hi, kc, k, avail, cand, except, ids, dist)
		fallbacks = append(fallbacks, fb...)
	}
	if len(fallbacks) > 0 {
		parallel(len(fallbacks), func(j int) {
			i := fallbacks[j]
			ix.scan(q[i*ix.dim:(i+1)*ix.dim], k, except, ids[i*k:(i+1)*k], dist[i*k:(i+1)*k])
		})
	}
	ix.mu.Lock()
	ix.stats.Queries += int64(b)
	ix.stats.Fallbacks += int64(len(fallbacks))
	ix.mu.Unlock()
	return ids, dist, nil
}

// candidates is the float32 stage's answer for a block: kc indices and
// approximate scores (‖e‖² − 2e·q) per query.
type candidates struct {
	idx   []int64
	score []float32
}

func (ix *Index) topk(q []float32, b, kc int, except []bool) (candidates, error) {
	c := candidates{idx: make([]int64, b*kc), score: make([]float32, b*kc)}
	err := torchrt.Do(func() error {
		var s torchrt.Scope
		defer s.Drop()
		qt, err := s.Keep(ts.NewTensorFromData(q, []int64{int64(b), int64(ix.dim)}))
		if err != nil {
			return err
		}
		if ix.device != gotch.CPU {
			if qt, err = s.Keep(qt.To(ix.device, false)); err != nil {
				return err
			}
		}
		enorm := ix.enorm
		if except != nil { // excepted rows score +∞: never among the kc ≤ available
			en := make([]float32, ix.n)
			for i, v := range ix.norm2 {
				en[i] = float32(v)
				if except[i] {
					en[i] = float32(math.Inf(1))
				}
			}
			if enorm, err = s.Keep(ts.NewTensorFromData(en, []int64{1, int64(ix.n)})); err != nil {
				return err
			}
			if ix.device != gotch.CPU {
				if enorm, err = s.Keep(enorm.To(ix.device, false)); err != nil {
					return err
				}
			}
		}
		scores, err := s.Keep(enorm.Addmm(qt, ix.et2, false)) // ‖e‖² − 2 q·e, b × n
		if err != nil {
			return err
		}
		if ix.device == gotch.CPU { // select in place (sel.go)
			if scores, err = s.Keep(scores.Contiguous(false)); err != nil {
				return err
			}
			p, err := scores.DataPtr()
			if err != nil {
				return err
			}
			smallest(p, b, ix.n, kc, c.score, c.idx)
			return nil
		}
		vals, idx, err := smallestK(&s, scores, kc)
		if err != nil {
			return err
		}
		if vals, err = s.Keep(vals.To(gotch.CPU, false)); err != nil { // a GPU's: the CPU returned above
			return err
		}
		if idx, err = s.Keep(idx.To(gotch.CPU, false)); err != nil {
			return err
		}
		if err := vals.CopyData(c.score, uint(b*kc)); err != nil {
			return err
		}
		return idx.CopyData(c.idx, uint(b*kc))
	})
	if err != nil {
		return c, fmt.Errorf("knn: search on %v: %w", torchrt.DeviceString(ix.device), torchrt.Clean(err))
	}
	return c, nil
}

// unit roundoff of float32.
const u32 = 1.0 / (1 << 24)

// rerank orders each query's candidates by exact distance and checks the
// certificate, on every core (each query's answer is its own); it returns
// the queries that need an exact scan, in increasing order.
func (ix *Index) rerank(q []float32, lo, hi, kc, k, avail int, c candidates, except []bool, ids []int32, dist []float64) []int {
	nq := hi - lo
	w := max(1, min(runtime.GOMAXPROCS(0), nq/64)) // runs of at least 64 queries
	fbs := make([][]int, w)
	parallel(w, func(p int) {
		fbs[p] = ix.rerankRows(q, lo, p*nq/w, (p+1)*nq/w, kc, k, avail, c, except, ids, dist)
	})
	var fb []int
	for _, f := range fbs {
		fb = append(fb, f...)
	}
	return fb
}

// rerankRows is rerank for the block's rows [from, to).
func (ix *Index) rerankRows(q []float32, lo, from, to, kc, k, avail int, c candidates, except []bool, ids []int32, dist []float64) []int {
	var fb []int
	type cd struct {
		i int32
		d float64
	}
	buf := make([]cd, kc)
	for r := from; r < to; r++ {
		qi := lo + r
		qv := q[qi*ix.dim : (qi+1)*ix.dim]
		var qn2 float64
		for _, v := range qv {
			qn2 += float64(v) * float64(v)
		}
		excepted := false
		for j := 0; j < kc; j++ {
			i := int32(c.idx[r*kc+j])
			excepted = excepted || except != nil && except[i]
			buf[j] = cd{i, SquaredDistance(qv, ix.Row(int(i)))}
		}
		if excepted { // cannot happen with finite scores; the scan decides
			fb = append(fb, qi)
			continue
		}
		sort.Slice(buf, func(a, b int) bool {
			if buf[a].d != buf[b].d {
				return buf[a].d < buf[b].d
			}
			return buf[a].i < buf[b].i
		})
		// Every score s = ‖e‖² − 2e·q was computed in float32 with error
		// at most δ: ‖e‖² rounded once, a dot product of dim terms
		// (γ_dim·Σ|e_i q_i| ≤ γ_dim·‖e‖‖q‖, for any summation order), and
		// one addition. Doubled for safety.
		qn := math.Sqrt(qn2)
		M := ix.maxNorm
		gamma := float64(ix.dim+2) * u32 / (1 - float64(ix.dim+2)*u32)
		delta := 2 * (u32*M*M + 2*gamma*M*qn + u32*(M*M+2*M*qn))
		// Any vector outside the candidates has a float32 score ≥ the
		// kc-th candidate's, so true squared distance ≥ that − δ + ‖q‖².
		bound := float64(c.score[r*kc+kc-1]) - delta + qn2
		if kc < avail && !(buf[k-1].d < bound) {
			fb = append(fb, qi)
			continue
		}
		for j := 0; j < k; j++ {
			ids[qi*k+j] = buf[j].i
			dist[qi*k+j] = math.Sqrt(buf[j].d)
		}
	}
	return fb
}

// SquaredDistance is ‖a − b‖² in float64 from the float32 values: the
// exact distance every search ranks by.
func SquaredDistance(a, b []float32) float64 {
	var s float64
	for i, v := range a {
		d := float64(v) - float64(b[i])
		s += d * d
	}
	return s
}

// squaredDistances4 is SquaredDistance of q to four rows at once, each
// summed in the same order as SquaredDistance sums it (so bit for bit
// its value): the four chains of dependent additions overlap.
func squaredDistances4(q, a, b, c, d []float32) (sa, sb, sc, sd float64) {
	a, b, c, d = a[:len(q)], b[:len(q)], c[:len(q)], d[:len(q)]
	for i, v := range q {
		x := float64(v)
		ta, tb, tc, td := x-float64(a[i]), x-float64(b[i]), x-float64(c[i]), x-float64(d[i])
		sa += ta * ta
		sb += tb * tb
		sc += tc * tc
		sd += td * td
	}
	return
}

// scan is the exact float64 search of one query over all candidates.
func (ix *Index) scan(q []float32, k int, except []bool, ids []int32, dist []float64) {
	type cd struct {
		i int32
		d float64
	}
	best := make([]cd, 0, k+1)
	for i := 0; i < ix.n; i++ {
		if except != nil && except[i] {
			continue
		}
		d := SquaredDistance(q, ix.Row(i))
		if len(best) == k && !(d < best[k-1].d) {
			continue // equal distance: the earlier (lower) index stays
		}
		j := sort.Search(len(best), func(j int) bool { return best[j].d > d })
		best = append(best, cd{})
		copy(best[j+1:], best[j:])
		best[j] = cd{int32(i), d}
		if len(best) > k {
			best = best[:k]
		}
	}
	for j := range best {
		ids[j], dist[j] = best[j].i, math.Sqrt(best[j].d)
	}
}

// Naive is the reference: an exact float64 scan per query, ties broken by
// the lower index. Tests compare Search with it.
func Naive(data []float32, n, dim int, q []float32, k int) ([]int32, []float64) {
	ix := &Index{n: n, dim: dim, data: data}
	b := len(q) / dim
	ids, dist := make([]int32, b*k), make([]float64, b*k)
	for i := 0; i < b; i++ {
		ix.scan(q[i*dim:(i+1)*dim], k, nil, ids[i*k:(i+1)*k], dist[i*k:(i+1)*k])
	}
	return ids, dist
}

func parallel(n int, f func(i int)) {
	w := min(n, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	next := make(chan int)
	for j := 0; j < w; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
