package knn

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/torchrt"
)

// The int8 path through libtorch (ScoringInt8Torch; any device, the GPU's
// path): the same quantized rows and queries as the CPU kernel's (q8.go),
// whose integer products ΣE·Q a device computes exactly by either of
//
//   - libtorch's _int_mm (int8 × int8 → int32 on CUDA, libtorch ≥ 2.1),
//     used where its binding exists and it agrees with the other product
//     on a probe when the index is built;
//   - a float32 product of the int8 values. Every partial sum of every
//     summation order is an integer of magnitude at most dim·127² < 2²⁴,
//     hence exact in float32, and the values (|E|, |Q| ≤ 127) are exact
//     in TF32's 11 significant bits: the product is exact whether or not
//     the process lets cuBLAS use TF32, and however it blocks or splits
//     the sum. (No switch of libtorch's is touched: they are per process,
//     and a model may be training on another goroutine.)
//
// The device then forms a = ‖e‖² − 2·(ΣE·Q·s)·t in float32, three
// roundings as the kernel's, and bounds each row's error by the smaller
// of two sums of rank-one terms (q8.go's δ with Hölder's bound on both
// roundings, or Cauchy–Schwarz's on both; the kernel takes the smaller
// per rounding, so this is at least its δ), each a product of a query's
// weights by a row's values: two small matrix products, with 1% more
// for their rounding (TF32's included). It takes each query's k-th
// smallest upper bound T = (a + δ)_(k) and the kc smallest lower bounds
// a − δ with their rows. A row outside the kc has a lower bound at least
// the kc-th's; where that exceeds T no row outside can be among the k
// nearest (nor tie with them), and the rows inside whose lower bound is
// at most T are ranked exactly in float64 (Rank). A query where it fails
// is searched again with q8CapFor(k) taken, then scanned.

type q8t struct {
	nr, dr int        // rows (a multiple of 16) and dimensions (of 8) as stored
	et     *ts.Tensor // dr × nr float32: Eᵀ, the int8 values
	norm   *ts.Tensor // 1 × nr float32 ‖e‖², +∞ past the last row
	scale  *ts.Tensor // 1 × nr float32 s
	rowsH  *ts.Tensor // 4 × nr: s, ‖ê‖₁, ‖ê‖₂, 8u‖e‖² (0 past the last row)
	rowsC  *ts.Tensor // 3 × nr: ‖e − ê‖₂, ‖ê‖₂, 8u‖e‖²
	normH  []float32  // norm on the host (for exceptions)

	// For _int_mm, E as int8 rows (nr × dr) and its transpose, a view:
	// cuBLAS's int8 products take their second operand column-major
	// (cuBLASLt's "TN"; others fail with CUBLAS_STATUS_NOT_SUPPORTED
	// for some shapes, seen on an H100 with libtorch 2.11 and CUDA 13).
	e8, e8t *ts.Tensor

	mu      sync.Mutex
	intMM   bool   // products by _int_mm (e8t); else the float32 product (et)
	product string // how products are computed, for Describe
}

// useIntMM reports whether products are by _int_mm.
func (d *q8t) useIntMM() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.intMM
}

// dropIntMM turns to the float32 products for good after _int_mm failed
// in a search (a shape the probe did not meet that cuBLAS refuses): the
// answer is the same, only slower, and Describe says why.
func (d *q8t) dropIntMM(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.intMM {
		d.intMM = false
		msg, _, _ := strings.Cut(torchrt.Clean(err).Error(), "\n") // its first line
		d.product = "float32 products of the int8 values (exact); _int_mm failed in a search: " + msg
	}
}

// products describes how products are computed.
func (d *q8t) products() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.product
}

// newQ8T quantizes data as newQ8 does and puts it on device.
func newQ8T(data []float32, n, dim int, device gotch.Device) (*q8t, error) {
	m := newQ8(data, n, dim, q8VNNI)
	d := &q8t{nr: m.nb * 16, dr: (dim + 7) / 8 * 8, normH: m.norm}
	vals := make([]int8, d.dr*d.nr) // Eᵀ
	rows := make([]int8, d.nr*d.dr) // E
	g := m.groups
	for i := 0; i < n; i++ {
		b, r := i/16, i%16
		for j := 0; j < dim; j++ {
			v := int8(int(m.e[(b*g+j/4)*64+r*4+j%4]) - 128)
			vals[j*d.nr+i], rows[i*d.dr+j] = v, v
		}
	}
	err := torchrt.Do(func() error {
		var s torchrt.Scope
		defer s.Drop()
		var err error
		put := func(v any, shape []int64) (*ts.Tensor, error) {
			t, err := ts.NewTensorFromData(v, shape)
			if err != nil || device == gotch.CPU {
				return t, err
			}
			return t.To(device, true)
		}
		if d.norm, err = put(m.norm, []int64{1, int64(d.nr)}); err != nil {
			return err
		}
		if d.scale, err = put(m.scale, []int64{1, int64(d.nr)}); err != nil {
			return err
		}
		n8u := make([]float32, d.nr)
		for i, v := range m.norm {
			if v <= math.MaxFloat32 {
				n8u[i] = up32(float64(v) * 8 / (1 << 24))
			}
		}
		if d.rowsH, err = put(slices.Concat(m.scale, m.l1, m.l2, n8u), []int64{4, int64(d.nr)}); err != nil {
			return err
		}
		if d.rowsC, err = put(slices.Concat(m.res, m.l2, n8u), []int64{3, int64(d.nr)}); err != nil {
			return err
		}
		e8, err := put(vals, []int64{int64(d.dr), int64(d.nr)})
		if err != nil {
			return err
		}
		ef, err := e8.Totype(gotch.Float, false)
		if err != nil {
			e8.Drop()
			return err
		}
		e8.Drop()
		d.et, d.product = ef, "float32 products of the int8 values (exact)"
		if device == gotch.CPU {
			return nil
		}
		// _int_mm where it gives the exact products on a probe: the
		// first rows' own values as 24 queries (its first dimension must
		// exceed 16; the fewest a search passes). Where the library this
		// process loaded has only a stub of it, the probe gets the stub's
		// error: the build this binary was linked against
		// (torchrt.Stubbed) need not be that library (a GPU node's,
		// docs/build.md). The float32 Eᵀ stays: a search falls back to
		// it if _int_mm fails on a shape the probe did not meet.
		if d.e8, err = put(rows, []int64{int64(d.nr), int64(d.dr)}); err != nil {
			return err
		}
		if d.e8t, err = d.e8.Transpose(0, 1, false); err != nil {
			return err
		}
		probe := make([]int8, 24*d.dr)
		for i := 0; i < 24; i++ {
			copy(probe[i*d.dr:(i+1)*d.dr], rows[(i%min(n, d.nr))*d.dr:])
		}
		why := d.probe(probe, device, func(q8 *ts.Tensor) (*ts.Tensor, error) { return q8.XpIntMm(d.e8t) })
		if why == "" {
			d.intMM, d.product = true, "int8 products by _int_mm"
		} else {
			d.e8t.Drop()
			d.e8.Drop()
			d.e8, d.e8t = nil, nil
			d.product += "; _int_mm unused: " + why
		}
		return nil
	})
	if err != nil {
		d.close()
		return nil, fmt.Errorf("knn: build int8 index on %v: %w", torchrt.DeviceString(device), torchrt.Clean(err))
	}
	return d, nil
}

// probe compares mm, an int8 product of the probe's rows (dr int8 values
// each) with Eᵀ giving int32, with the exact float32 product on device,
// and says why it cannot be used ("" where it can). It runs under
// torchrt.Do.
func (d *q8t) probe(probe []int8, device gotch.Device, mm func(q8 *ts.Tensor) (*ts.Tensor, error)) string {
	var s torchrt.Scope
	defer s.Drop()
	q8, err := s.Keep(ts.NewTensorFromData(probe, []int64{int64(len(probe) / d.dr), int64(d.dr)}))
	if err == nil && device != gotch.CPU {
		q8, err = s.Keep(q8.To(device, false))
	}
	if err != nil {
		return torchrt.Clean(err).Error()
	}
	got, err := s.Keep(mm(q8))
	if err == nil {
		got, err = s.Keep(got.Totype(gotch.Float, false))
	}
	if err != nil {
		return torchrt.Clean(err).Error()
	}
	qf, err := s.Keep(q8.Totype(gotch.Float, false))
	if err != nil {
		return torchrt.Clean(err).Error()
	}
	want, err := s.Keep(qf.Mm(d.et, false))
	if err != nil {
		return torchrt.Clean(err).Error()
	}
	if eq, err := got.Equal(want, false); err != nil {
		return torchrt.Clean(err).Error()
	} else if !eq {
		return "its products differ from the exact ones on a probe"
	}
	return ""
}

func (d *q8t) close() {
	for _, t := range []*ts.Tensor{d.et, d.norm, d.scale, d.rowsH, d.rowsC, d.e8t, d.e8} {
		if t != nil {
			t.Drop()
		}
	}
	d.et, d.norm, d.scale, d.rowsH, d.rowsC, d.e8t, d.e8 = nil, nil, nil, nil, nil, nil, nil
}

// bounds returns, for each of the queries (rows of d.dr values in x.q),
// its k-th smallest upper bound thr and its kc smallest lower
// bounds (ascending) with their rows.
func (d *q8t) bounds(x *q8Queries, k, kc int, norm []float32, device gotch.Device) (lows []float32, idx []int64, thr []float32, err error) {
	nq := x.nq
	intMM := d.useIntMM()
	if intMM && nq <= 16 { // _int_mm takes more than 16 rows
		nq = 24
	}
	q := x.q // quantized with rows of d.dr values
	if nq > x.nq {
		q = append(q, make([]int8, (nq-x.nq)*d.dr)...)
	}
	// per query: −2t, and the weights of the rows' values in δ
	m2t, qh, qc := make([]float32, nq), make([]float32, nq*4), make([]float32, nq*3)
	for i := 0; i < x.nq; i++ {
		m2t[i] = -2 * x.scale[i]
		copy(qh[i*4:], []float32{x.l1[i], x.s[i], x.f[i], 1})
		copy(qc[i*3:], []float32{x.l2[i], up32(float64(x.res[i]) + float64(x.f[i])), 1})
	}
	lows, idx, thr = make([]float32, nq*kc), make([]int64, nq*kc), make([]float32, nq)
	err = torchrt.Do(func() error {
		var s torchrt.Scope
		defer s.Drop()
		put := func(v any, shape []int64) (*ts.Tensor, error) {
			t, err := s.Keep(ts.NewTensorFromData(v, shape))
			if err != nil || device == gotch.CPU {
				return t, err
			}
			return s.Keep(t.To(device, false))
		}
		get := func(t *ts.Tensor, dst any, n int) error {
			if device != gotch.CPU {
				var err error
				if t, err = s.Keep(t.To(gotch.CPU, false)); err != nil {
					return err
				}
			}
			t, err := s.Keep(t.Contiguous(false))
			if err != nil {
				return err
			}
			return t.CopyData(dst, uint(n))
		}
		qt, err := put(q, []int64{int64(nq), int64(d.dr)})
		if err != nil {
			return err
		}
		var a *ts.Tensor
		if intMM {
			if a, err = s.Keep(qt.XpIntMm(d.e8t)); err != nil {
				d.dropIntMM(err)
				_ = torchrt.Err() // the failure is handled: clear it
				a = nil
			}
		}
		if a == nil {
			if qt, err = s.Keep(qt.Totype(gotch.Float, false)); err != nil {
				return err
			}
			if a, err = s.Keep(qt.Mm(d.et, false)); err != nil { // exact: see above
				return err
			}
		}
		if a, err = s.Keep(a.Totype(gotch.Float, false)); err != nil { // exact below 2²⁴ (a float32 a's own storage)
			return err
		}
		if err := a.Mul_(d.scale); err != nil { // ΣE·Q·s
			return err
		}
		mt, err := put(m2t, []int64{int64(nq), 1})
		if err != nil {
			return err
		}
		if err := a.Mul_(mt); err != nil { // −2·(ΣE·Q·s)·t
			return err
		}
		nt := d.norm
		if norm != nil {
			if nt, err = put(norm, []int64{1, int64(d.nr)}); err != nil {
				return err
			}
		}
		if err := a.Add_(nt); err != nil { // a = ‖e‖² − 2·…
			return err
		}
		// δ: the smaller of Hölder's and Cauchy–Schwarz's sums, 1% more
		qht, err := put(qh, []int64{int64(nq), 4})
		if err != nil {
			return err
		}
		qct, err := put(qc, []int64{int64(nq), 3})
		if err != nil {
			return err
		}
		dh, err := s.Keep(qht.Mm(d.rowsH, false))
		if err != nil {
			return err
		}
		dc, err := s.Keep(qct.Mm(d.rowsC, false))
		if err != nil {
			return err
		}
		delta, err := s.Keep(dh.Minimum(dc, false))
		if err != nil {
			return err
		}
		margin := ts.FloatScalar(1.01)
		defer margin.Drop()
		if err := delta.MulScalar_(margin); err != nil {
			return err
		}
		up, err := s.Keep(a.Add(delta, false))
		if err != nil {
			return err
		}
		if err := a.Sub_(delta); err != nil { // a − δ
			return err
		}
		tv, _, err := smallestK(&s, up, k)
		if err != nil {
			return err
		}
		kth, err := s.Keep(tv.Select(1, int64(k-1), false))
		if err != nil {
			return err
		}
		lv, li, err := smallestK(&s, a, kc)
		if err != nil {
			return err
		}
		if err := get(kth, thr, nq); err != nil {
			return err
		}
		if err := get(lv, lows, nq*kc); err != nil {
			return err
		}
		return get(li, idx, nq*kc)
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("knn: int8 search on %v: %w", torchrt.DeviceString(device), torchrt.Clean(err))
	}
	return lows, idx, thr, nil
}

// searchQ8T answers SearchExcept on the int8 path through libtorch.
func (ix *Index) searchQ8T(q []float32, k, avail int, except []bool, ids []int32, dist []float64) error {
	d := ix.q8t
	var norm []float32
	if except != nil {
		norm = slices.Clone(d.normH)
		for i, e := range except {
			if e {
				norm[i] = float32(math.Inf(1))
			}
		}
	}
	b := len(q) / ix.dim
	var kept, fallbacks atomic.Int64
	// answer searches the queries todo (indices into q) with kc rows
	// taken, and returns those whose bound the kc rows cannot settle.
	answer := func(todo []int, kc int) ([]int, error) {
		var again []int
		block := int(max(8, ix.budget/(4*int64(d.nr))))
		for lo := 0; lo < len(todo); lo += block {
			part := todo[lo:min(len(todo), lo+block)]
			sub := make([]float32, 0, len(part)*ix.dim)
			for _, i := range part {
				sub = append(sub, q[i*ix.dim:(i+1)*ix.dim]...)
			}
			x := quantizeQueries(sub, ix.dim, d.dr, q8VNNI.level, q8VNNI.queries)
			lows, idx, thr, err := d.bounds(x, k, kc, norm, ix.device)
			if err != nil {
				return nil, err
			}
			var mu sync.Mutex
			var unsettled []int
			parallel(len(part), func(r int) {
				i := part[r]
				low, t := lows[r*kc:(r+1)*kc], thr[r]
				if kc < avail && !(low[kc-1] > t) { // a row outside may be among the k
					mu.Lock()
					unsettled = append(unsettled, i)
					mu.Unlock()
					return
				}
				rows := make([]int32, 0, k)
				for j, l := range low {
					if !(l <= t) {
						break
					}
					rows = append(rows, int32(idx[r*kc+j]))
				}
				if len(rows) < k { // cannot happen while the bounds hold
					mu.Lock()
					unsettled = append(unsettled, i)
					mu.Unlock()
					return
				}
				kept.Add(int64(len(rows)))
				ix.Rank(q[i*ix.dim:(i+1)*ix.dim], rows, k, ids[i*k:(i+1)*k], dist[i*k:(i+1)*k])
			})
			slices.Sort(unsettled)
			again = append(again, unsettled...)
		}
		return again, nil
	}
	todo := make([]int, b)
	for i := range todo {
		todo[i] = i
	}
	kc := min(avail, k+max(24, k))
	todo, err := answer(todo, kc)
	if err != nil {
		return err
	}
	if len(todo) > 0 && kc < avail {
		if todo, err = answer(todo, min(avail, q8CapFor(k))); err != nil {
			return err
		}
	}
	fallbacks.Store(int64(len(todo)))
	parallel(len(todo), func(j int) {
		i := todo[j]
		ix.scan(q[i*ix.dim:(i+1)*ix.dim], k, except, ids[i*k:(i+1)*k], dist[i*k:(i+1)*k])
	})
	ix.mu.Lock()
	ix.stats.Queries += int64(b)
	ix.stats.Fallbacks += fallbacks.Load()
	ix.stats.Kept += kept.Load()
	ix.mu.Unlock()
	return nil
}

// smallestK returns the k smallest values of each row of t (b × n), in
// increasing order, and their columns, both kept in s. Where the rows are
// long it first takes the minimum of each chunk of selectChunk columns
// (the last chunk may be shorter), keeps the k chunks with the smallest
// minima and selects among their columns: the same k values as a top-k
// of the whole row (whichever of tied columns is returned), because every
// column outside those chunks is at least the k-th chunk minimum, itself
// one of k distinct columns in the chunks. A device's top-k of a long row
// costs several passes over it; the minima cost one (on an H100, the
// top-k was the larger part of a search batch: docs/gpu.md).
func smallestK(s *torchrt.Scope, t *ts.Tensor, k int) (vals, idx *ts.Tensor, err error) {
	size, err := t.Size()
	if err != nil {
		return nil, nil, err
	}
	b, n := size[0], size[1]
	whole := n / selectChunk
	chunks := whole
	if n%selectChunk != 0 {
		chunks++
	}
	if chunks < 4*int64(k) { // too few chunks to gain: the top-k of the row
		vals, idx, err = t.Topk(int64(k), 1, false, true, false)
		if err != nil {
			return nil, nil, err
		}
		s.Keep(vals, nil)
		s.Keep(idx, nil)
		return vals, idx, nil
	}
	dev, err := t.Device()
	if err != nil {
		return nil, nil, err
	}
	body, err := s.Keep(t.Narrow(1, 0, whole*selectChunk, false))
	if err != nil {
		return nil, nil, err
	}
	if body, err = s.Keep(body.View([]int64{b, whole, selectChunk}, false)); err != nil {
		return nil, nil, err
	}
	mins, err := s.Keep(body.Amin([]int64{2}, false, false))
	if err != nil {
		return nil, nil, err
	}
	if whole < chunks {
		tail, err := s.Keep(t.Narrow(1, whole*selectChunk, n-whole*selectChunk, false))
		if err != nil {
			return nil, nil, err
		}
		if tail, err = s.Keep(tail.Amin([]int64{1}, true, false)); err != nil {
			return nil, nil, err
		}
		if mins, err = s.Keep(ts.Cat([]*ts.Tensor{mins, tail}, 1)); err != nil {
			return nil, nil, err
		}
	}
	cv, cid, err := mins.Topk(int64(k), 1, false, false, false)
	if err != nil {
		return nil, nil, err
	}
	s.Keep(cv, nil)
	s.Keep(cid, nil)
	// cols: the chosen chunks' columns, b × k·selectChunk
	width, last := ts.IntScalar(selectChunk), ts.IntScalar(n-1)
	defer width.Drop()
	defer last.Drop()
	off, err := s.Keep(ts.Arange(width, gotch.Int64, dev))
	if err != nil {
		return nil, nil, err
	}
	cols, err := s.Keep(cid.MulScalar(width, false))
	if err != nil {
		return nil, nil, err
	}
	if cols, err = s.Keep(cols.Unsqueeze(2, false)); err != nil {
		return nil, nil, err
	}
	if cols, err = s.Keep(cols.Add(off, false)); err != nil {
		return nil, nil, err
	}
	if cols, err = s.Keep(cols.View([]int64{b, int64(k) * selectChunk}, false)); err != nil {
		return nil, nil, err
	}
	in := cols
	if whole < chunks { // the short chunk's columns past n: read n−1, score +∞
		if in, err = s.Keep(cols.ClampMax(last, false)); err != nil {
			return nil, nil, err
		}
	}
	cand, err := s.Keep(t.Gather(1, in, false, false))
	if err != nil {
		return nil, nil, err
	}
	if whole < chunks {
		end := ts.IntScalar(n)
		past, err := s.Keep(cols.Ge(end, false))
		end.Drop()
		if err != nil {
			return nil, nil, err
		}
		inf := ts.FloatScalar(math.Inf(1))
		err = cand.MaskedFill_(past, inf)
		inf.Drop()
		if err != nil {
			return nil, nil, err
		}
	}
	vals, at, err := cand.Topk(int64(k), 1, false, true, false)
	if err != nil {
		return nil, nil, err
	}
	s.Keep(vals, nil)
	s.Keep(at, nil)
	if idx, err = s.Keep(cols.Gather(1, at, false, false)); err != nil {
		return nil, nil, err
	}
	return vals, idx, nil
}

// selectChunk is the width of smallestK's chunks.
const selectChunk = 64
