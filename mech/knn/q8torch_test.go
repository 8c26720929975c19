package knn

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/torchrt"
)

// TestInt8TorchProductsExact: the float32 product of int8 values that the
// int8-torch path relies on is the exact integer product at its largest
// (q8MaxDim dimensions, every value ±127, and random values), and every
// int8 value is unchanged by TF32's rounding of inputs to 11 significant
// bits. Fails if q8MaxDim grows past where float32 sums stay exact. The
// product runs on the device XP_DEVICE names (the CPU when unset).
func TestInt8TorchProductsExact(t *testing.T) {
	for v := -127; v <= 127; v++ {
		if f := float32(v); tf32(f) != f {
			t.Fatalf("%d rounds to %g in TF32", v, tf32(f))
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	const nq, n, dim = 5, 7, q8MaxDim
	q, e := make([]int8, nq*dim), make([]int8, dim*n) // e is Eᵀ
	for i := range q {
		q[i] = int8([]int{127, -127, r.IntN(255) - 127}[min(2, i/dim%3)])
	}
	for i := range e {
		e[i] = int8([]int{127, -127, r.IntN(255) - 127}[min(2, (i%n)%3)])
	}
	got := make([]float32, nq*n)
	err := torchrt.Do(func() error {
		var s torchrt.Scope
		defer s.Drop()
		qt, err := s.Keep(ts.NewTensorFromData(q, []int64{nq, dim}))
		if err != nil {
			return err
		}
		et, err := s.Keep(ts.NewTensorFromData(e, []int64{dim, n}))
		if err != nil {
			return err
		}
		if qt, err = s.Keep(qt.Totype(gotch.Float, false)); err != nil {
			return err
		}
		if et, err = s.Keep(et.Totype(gotch.Float, false)); err != nil {
			return err
		}
		dev := testDevice(t) // XP_DEVICE: a GPU's product
		if qt, err = s.Keep(qt.To(dev, false)); err != nil {
			return err
		}
		if et, err = s.Keep(et.To(dev, false)); err != nil {
			return err
		}
		p, err := s.Keep(qt.Mm(et, false))
		if err != nil {
			return err
		}
		if p, err = s.Keep(p.To(gotch.CPU, false)); err != nil {
			return err
		}
		return p.CopyData(got, nq*n)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < nq; i++ {
		for j := 0; j < n; j++ {
			var want int64
			for l := 0; l < dim; l++ {
				want += int64(q[i*dim+l]) * int64(e[l*n+j])
			}
			if float64(got[i*n+j]) != float64(want) {
				t.Errorf("query %d row %d: float32 product %.1f, exact %d", i, j, got[i*n+j], want)
			}
		}
	}
	if max := q8MaxDim * 127 * 127; max >= 1<<24 {
		t.Errorf("q8MaxDim·127² = %d: float32 sums are not exact past 2²⁴", max)
	}
}

// tf32 rounds f to TF32's 10 stored significand bits (to nearest, ties
// to even), as a GPU's TF32 products do with their inputs.
func tf32(f float32) float32 {
	b := math.Float32bits(f)
	b += 0xfff + (b>>13)&1
	return math.Float32frombits(b &^ 0x1fff)
}

// TestInt8TorchProbe: the probe that decides whether the int8-torch path
// may use a device's int8 product accepts the exact product and refuses
// one that is wrong by one anywhere, and one that fails.
func TestInt8TorchProbe(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	n, dim := 40, 20
	d, err := newQ8T(randMatrix(r, n, dim, 1), n, dim, gotch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	probe := make([]int8, 32*d.dr)
	for i := range probe[:32*dim] {
		probe[i] = int8(r.IntN(255) - 127)
	}
	exact := func(off float64) func(q8 *ts.Tensor) (*ts.Tensor, error) {
		return func(q8 *ts.Tensor) (*ts.Tensor, error) {
			qf, err := q8.Totype(gotch.Float, false)
			if err != nil {
				return nil, err
			}
			defer qf.Drop()
			p, err := qf.Mm(d.et, false)
			if err != nil {
				return nil, err
			}
			defer p.Drop()
			if off != 0 {
				if p, err = p.AddScalar(ts.FloatScalar(off), false); err != nil {
					return nil, err
				}
				defer p.Drop()
			}
			return p.Totype(gotch.Int, false)
		}
	}
	for _, c := range []struct {
		name string
		mm   func(q8 *ts.Tensor) (*ts.Tensor, error)
		ok   bool
	}{
		{"exact", exact(0), true},
		{"off by one", exact(1), false},
		{"this libtorch's _int_mm", func(q8 *ts.Tensor) (*ts.Tensor, error) { return q8.XpIntMm(d.et) }, false},
	} {
		var why string
		if err := torchrt.Do(func() error { why = d.probe(probe, gotch.CPU, c.mm); return nil }); err != nil {
			t.Fatal(err)
		}
		if (why == "") != c.ok {
			t.Errorf("%s: probe says %q", c.name, why)
		}
		t.Logf("%s: %q", c.name, why)
	}
	if !strings.Contains(d.product, "exact") {
		t.Errorf("products described as %q", d.product)
	}
}

// TestInt8TorchFallsBack: where _int_mm fails in a search (cuBLAS refuses
// some shapes the probe did not meet), the index answers by the float32
// products, exactly as Naive does, says so, and keeps doing so. Forced
// here on an index whose int8 operand is set up by hand: this libtorch's
// _int_mm (a stub in Debian's 1.13; CPU-only in later ones) stands in for
// the refusing one.
func TestInt8TorchFallsBack(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	n, dim, nq := 300, 20, 40
	data, q := randMatrix(r, n, dim, 1), randMatrix(r, nq, dim, 1)
	ix, err := New(data, n, dim, gotch.CPU, Options{Scoring: ScoringInt8Torch})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	d := ix.q8t
	err = torchrt.Do(func() error {
		e, err := d.et.Transpose(0, 1, false)
		if err != nil {
			return err
		}
		defer e.Drop()
		if d.e8, err = e.Totype(gotch.Int8, false); err != nil {
			return err
		}
		if d.e8, err = d.e8.Contiguous(true); err != nil {
			return err
		}
		d.e8t, err = d.e8.Transpose(0, 1, false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	d.intMM, d.product = true, "int8 products by _int_mm" // as newQ8T sets them
	wantIDs, wantDist := Naive(data, n, dim, q, 3)
	for i := range 2 {
		ids, dist, err := ix.Search(q, 3)
		if err != nil {
			t.Fatalf("search %d: %v", i, err)
		}
		if !slices.Equal(ids, wantIDs) || !slices.Equal(dist, wantDist) {
			t.Errorf("search %d differs from Naive", i)
		}
	}
	if p := ix.Products(); d.useIntMM() != strings.HasPrefix(p, "int8 products by _int_mm") {
		t.Errorf("products %q while _int_mm is used: %v", p, d.useIntMM())
	}
	t.Logf("products: %s", ix.Products())
}

// TestSmallestKEqualsTopk: smallestK's chunked selection returns, for
// every row, the k smallest values of a plain top-k in the same order,
// and columns holding them, on rows with and without a short last chunk,
// with many ties (values from a few levels), +∞ (excepted rows) and k
// near the chunk count, on the device XP_DEVICE names. Fails if the
// chunk minima lose a value (a chunk too few kept, a wrong column offset,
// a short chunk's padding read as a value).
func TestSmallestKEqualsTopk(t *testing.T) {
	dev := testDevice(t)
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		b, n, k, levels int
		inf             float64 // share of +∞ values
		low             int     // the row's smallest values in its last columns
	}{
		{3, 64 * 40, 9, 0, 0, 0},
		{5, 64*40 + 17, 9, 0, 0, 0},
		{4, 64*40 + 1, 33, 0, 0, 0},
		{6, 64*50 + 63, 9, 3, 0, 0},  // ties everywhere
		{6, 64 * 50, 12, 5, 0.95, 0}, // mostly +∞, ties among the rest
		{2, 64*36 + 5, 9, 0, 0, 0},   // 37 chunks: just past 4k
		{2, 64 * 20, 9, 0, 0, 0},     // too few chunks: the plain top-k
		{7, 1000, 1, 0, 0.5, 0},
		{3, 64*40 + 3, 9, 0, 0, 3}, // the short chunk holds the smallest
		{3, 64 * 40, 9, 0, 0, 5},   // the last whole chunk does
	} {
		v := make([]float32, c.b*c.n)
		for i := range v {
			switch {
			case r.Float64() < c.inf:
				v[i] = float32(math.Inf(1))
			case c.levels > 0:
				v[i] = float32(r.IntN(c.levels))
			default:
				v[i] = float32(r.NormFloat64())
			}
		}
		for row := range c.b { // at least k finite values per row
			for j := range c.k {
				v[row*c.n+r.IntN(c.n)] = float32(j)
			}
			for j := range c.low {
				v[(row+1)*c.n-1-j] = float32(-1000 - j)
			}
		}
		err := torchrt.Do(func() error {
			var s torchrt.Scope
			defer s.Drop()
			x, err := s.Keep(ts.NewTensorFromData(v, []int64{int64(c.b), int64(c.n)}))
			if err != nil {
				return err
			}
			if x, err = s.Keep(x.To(dev, false)); err != nil {
				return err
			}
			vals, idx, err := smallestK(&s, x, c.k)
			if err != nil {
				return err
			}
			got, at := make([]float32, c.b*c.k), make([]int64, c.b*c.k)
			if vals, err = s.Keep(vals.To(gotch.CPU, false)); err != nil {
				return err
			}
			if idx, err = s.Keep(idx.To(gotch.CPU, false)); err != nil {
				return err
			}
			if err := vals.CopyData(got, uint(len(got))); err != nil {
				return err
			}
			if err := idx.CopyData(at, uint(len(at))); err != nil {
				return err
			}
			for row := range c.b {
				want := slices.Clone(v[row*c.n : (row+1)*c.n])
				slices.Sort(want)
				g := got[row*c.k : (row+1)*c.k]
				if !slices.Equal(g, want[:c.k]) {
					t.Errorf("b %d n %d k %d levels %d row %d: %v, want %v", c.b, c.n, c.k, c.levels, row, g, want[:c.k])
				}
				cols := at[row*c.k : (row+1)*c.k]
				seen := map[int64]bool{}
				for j, col := range cols {
					if col < 0 || col >= int64(c.n) || seen[col] || v[row*c.n+int(col)] != g[j] {
						t.Errorf("b %d n %d k %d row %d: column %d for value %v", c.b, c.n, c.k, row, col, g[j])
					}
					seen[col] = true
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
