package knn

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/torchrt"
)

func randMatrix(r *rand.Rand, n, dim int, scale float64) []float32 {
	m := make([]float32, n*dim)
	for i := range m {
		m[i] = float32(r.NormFloat64() * scale)
	}
	return m
}

// scorings are the scoring paths this machine runs (int8-torch on the
// CPU: every step of the GPU's path but the device; the kernels where
// the CPU has their instructions): each must answer exactly as Naive
// does.
func scorings(t testing.TB) []Scoring {
	s := []Scoring{ScoringFloat32, ScoringInt8Torch}
	if f32Supported() {
		s = append(s, ScoringFloat32Kernel)
	} else {
		t.Logf("SKIP float32 kernel: the CPU lacks AVX2 and FMA")
	}
	if q8aSupported() {
		s = append(s, ScoringInt8AVX2)
	} else {
		t.Logf("SKIP int8-avx2 kernel: the CPU lacks AVX2 and FMA")
	}
	if ok, why := Int8Available(); ok {
		s = append(s, ScoringInt8)
	} else {
		t.Logf("SKIP int8 scoring: %s", why)
	}
	return s
}

// deviceFor is where the tests build an index scored by sc: the
// libtorch paths' on the device XP_DEVICE names (cpu when unset; cuda on
// a GPU machine, docs/gpu.md), the kernels' on the CPU, the only place
// they run.
func deviceFor(t testing.TB, sc Scoring) gotch.Device {
	if sc != ScoringFloat32 && sc != ScoringInt8Torch {
		return gotch.CPU
	}
	return testDevice(t)
}

// testDevice is the device XP_DEVICE names (cpu when unset).
func testDevice(t testing.TB) gotch.Device {
	d, err := torchrt.ParseDevice(cmp.Or(os.Getenv("XP_DEVICE"), "cpu"))
	if err != nil {
		t.Fatalf("XP_DEVICE: %v", err)
	}
	return d
}

func TestSearchEqualsNaive(t *testing.T) {
	for _, sc := range scorings(t) {
		t.Run(string(sc), func(t *testing.T) { testSearchEqualsNaive(t, sc) })
	}
}

func testSearchEqualsNaive(t *testing.T, sc Scoring) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name       string
		n, dim, nq int
		k          int
		dups       int     // rows copied onto others (exact ties)
		cluster    bool    // all copies of one row: more equal vectors than candidates
		noise      float64 // query = a row + noise of this scale
		budget     int64
	}{
		{"small", 50, 3, 40, 1, 0, false, 0.5, 0},
		{"k5", 500, 16, 100, 5, 0, false, 1, 0},
		{"ties", 300, 8, 60, 3, 120, false, 0, 0},          // queries sit on duplicated rows
		{"cluster", 300, 8, 60, 3, 40, true, 0, 0},         // 40 equal rows, some queries on them
		{"ties-noisy", 300, 8, 60, 4, 150, false, 1e-4, 0}, // near-ties
		{"blocks", 2000, 32, 257, 2, 10, false, 3, 64 << 10},
		{"k=n", 7, 2, 5, 7, 2, false, 1, 0},
		{"far", 1000, 300, 20, 2, 0, false, 30, 0}, // noise norm ≫ vector norms, as at small ε
		{"odd-dim", 333, 301, 29, 2, 5, false, 0.3, 0},
		{"big-cluster", 5000, 8, 30, 3, 4500, true, 0, 0}, // more equal rows than the kernels keep (int8-avx2: 4,096): exact scan
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := randMatrix(r, c.n, c.dim, 1)
			for d := 0; d < c.dups; d++ {
				src, dst := r.IntN(c.n), r.IntN(c.n)
				if c.cluster {
					src, dst = 0, 1+d
				}
				copy(data[dst*c.dim:(dst+1)*c.dim], data[src*c.dim:(src+1)*c.dim])
			}
			q := make([]float32, c.nq*c.dim)
			for i := 0; i < c.nq; i++ {
				row := r.IntN(c.n)
				for j := 0; j < c.dim; j++ {
					q[i*c.dim+j] = data[row*c.dim+j] + float32(r.NormFloat64()*c.noise)
				}
			}
			ix, err := New(data, c.n, c.dim, deviceFor(t, sc), Options{Budget: c.budget, Scoring: sc})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			if ix.Scoring() != sc {
				t.Fatalf("scoring %s, asked for %s", ix.Scoring(), sc)
			}
			ids, dist, err := ix.Search(q, c.k)
			if err != nil {
				t.Fatal(err)
			}
			wantIDs, wantDist := Naive(data, c.n, c.dim, q, c.k)
			if !slices.Equal(ids, wantIDs) || !slices.Equal(dist, wantDist) {
				for i := range ids {
					if ids[i] != wantIDs[i] {
						t.Fatalf("query %d rank %d: got %d (%.9g), want %d (%.9g)", i/c.k, i%c.k, ids[i], dist[i], wantIDs[i], wantDist[i])
					}
				}
				t.Fatal("distances differ")
			}
			for i := 0; i+1 < len(dist); i++ {
				if (i+1)%c.k != 0 && dist[i] > dist[i+1] {
					t.Fatalf("row %d not ordered", i/c.k)
				}
			}
			t.Logf("%+v", ix.Stats())
			if c.name == "cluster" && sc == ScoringFloat32 && ix.Stats().Fallbacks == 0 {
				t.Error("exact ties never triggered the exact rescan: certificate too weak to notice")
			}
			if c.name == "big-cluster" && sc != ScoringFloat32 && ix.Stats().Fallbacks == 0 {
				t.Error("4,500 equal rows fit in the kept rows' buffer")
			}
		})
	}
}

// TestSearchExceptEqualsNaive: a search with exceptions answers exactly
// what Naive answers over the rows left (indices mapped back), including
// duplicated rows on either side of the exception and k equal to the rows
// left.
func TestSearchExceptEqualsNaive(t *testing.T) {
	for _, sc := range scorings(t) {
		t.Run(string(sc), func(t *testing.T) { testSearchExceptEqualsNaive(t, sc) })
	}
}

func testSearchExceptEqualsNaive(t *testing.T, sc Scoring) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		name          string
		n, dim, nq, k int
		share         float64 // share of rows excepted
		dups          int
	}{
		{"few", 300, 8, 50, 3, 0.1, 0},
		{"most", 300, 8, 50, 4, 0.9, 0},
		{"ties", 300, 8, 50, 3, 0.5, 150},
		{"all-left", 40, 4, 10, 20, 0.5, 0}, // k = every row left
	} {
		t.Run(c.name, func(t *testing.T) {
			data := randMatrix(r, c.n, c.dim, 1)
			for d := 0; d < c.dups; d++ {
				src, dst := r.IntN(c.n), r.IntN(c.n)
				copy(data[dst*c.dim:(dst+1)*c.dim], data[src*c.dim:(src+1)*c.dim])
			}
			except := make([]bool, c.n)
			var kept []int32
			var sub []float32
			for i := range except {
				except[i] = r.Float64() < c.share
				if !except[i] {
					kept = append(kept, int32(i))
					sub = append(sub, data[i*c.dim:(i+1)*c.dim]...)
				}
			}
			k := c.k
			if c.name == "all-left" {
				k = len(kept)
			}
			q := make([]float32, c.nq*c.dim)
			for i := 0; i < c.nq; i++ {
				row := r.IntN(c.n)
				for j := 0; j < c.dim; j++ {
					q[i*c.dim+j] = data[row*c.dim+j] + float32(r.NormFloat64()*0.3)
				}
			}
			ix, err := New(data, c.n, c.dim, deviceFor(t, sc), Options{Scoring: sc})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			ids, dist, err := ix.SearchExcept(q, k, except)
			if err != nil {
				t.Fatal(err)
			}
			wantIDs, wantDist := Naive(sub, len(kept), c.dim, q, k)
			for i := range wantIDs {
				if ids[i] != kept[wantIDs[i]] || dist[i] != wantDist[i] {
					t.Fatalf("query %d rank %d: got %d (%.9g), want %d (%.9g)", i/k, i%k, ids[i], dist[i], kept[wantIDs[i]], wantDist[i])
				}
			}
			if _, _, err := ix.SearchExcept(q, len(kept)+1, except); err == nil {
				t.Error("k above the rows left accepted")
			}
		})
	}
}

// TestSearchNearEqualsNaive: whatever rows a search is told are near its
// queries — their own nearest, one row repeated, rows the search
// excepts, rows far away, fewer than k — it answers exactly what Naive
// answers. A scanning kernel's threshold starts at the k-th smallest
// bound of those rows' scores: one that counted a repeated row twice, or
// an excepted row at all, would start below the k-th nearest's score
// and lose it.
func TestSearchNearEqualsNaive(t *testing.T) {
	for _, sc := range scorings(t) {
		t.Run(string(sc), func(t *testing.T) { testSearchNearEqualsNaive(t, sc) })
	}
}

func testSearchNearEqualsNaive(t *testing.T, sc Scoring) {
	r := rand.New(rand.NewPCG(7, 8))
	const n, dim, nq = 2000, 32, 120
	data := randMatrix(r, n, dim, 1)
	for d := 0; d < 100; d++ { // exact ties
		src, dst := r.IntN(n), r.IntN(n)
		copy(data[dst*dim:(dst+1)*dim], data[src*dim:(src+1)*dim])
	}
	q := make([]float32, nq*dim)
	for i := 0; i < nq; i++ {
		row := r.IntN(n)
		for j := 0; j < dim; j++ {
			q[i*dim+j] = data[row*dim+j] + float32(r.NormFloat64()*0.5)
		}
	}
	ix, err := New(data, n, dim, deviceFor(t, sc), Options{Scoring: sc})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got, want := ix.UsesNear(), sc == ScoringInt8AVX2; got != want {
		t.Errorf("UsesNear %v on %s, want %v", got, sc, want)
	}
	nearest, _ := Naive(data, n, dim, q, 16)
	except := make([]bool, n)
	var kept []int32
	var sub []float32
	for i := range except {
		except[i] = r.Float64() < 0.5
		if !except[i] {
			kept = append(kept, int32(i))
			sub = append(sub, data[i*dim:(i+1)*dim]...)
		}
	}
	// the queries' nearest rows that the search excepts
	excepted := make([][]int32, nq)
	for i := range excepted {
		for _, id := range nearest[i*16 : (i+1)*16] {
			if except[id] {
				excepted[i] = append(excepted[i], id)
			}
		}
	}
	for _, k := range []int{1, 2, 5} {
		for _, c := range []struct {
			name   string
			except []bool
			near   func(i int) []int32
		}{
			{"own", nil, func(i int) []int32 { return nearest[i*16 : (i+1)*16] }},
			{"reversed", nil, func(i int) []int32 {
				s := slices.Clone(nearest[i*16 : (i+1)*16])
				slices.Reverse(s)
				return s
			}},
			{"repeated", nil, func(i int) []int32 { return slices.Repeat(nearest[i*16:i*16+1], 8) }},
			{"far", nil, func(i int) []int32 {
				return []int32{int32(r.IntN(n)), int32(r.IntN(n)), int32(r.IntN(n)), int32(r.IntN(n)), int32(r.IntN(n))}
			}},
			{"fewer", nil, func(i int) []int32 { return nearest[i*16 : i*16+k-1] }},
			{"none", nil, func(i int) []int32 { return nil }},
			{"excepted", except, func(i int) []int32 { return excepted[i] }},
			{"excepted-and-own", except, func(i int) []int32 { return append(slices.Clone(excepted[i]), nearest[i*16:(i+1)*16]...) }},
		} {
			t.Run(fmt.Sprintf("k=%d/%s", k, c.name), func(t *testing.T) {
				near := make([][]int32, nq)
				for i := range near {
					near[i] = c.near(i)
				}
				ids, dist, err := ix.SearchNear(q, k, c.except, near)
				if err != nil {
					t.Fatal(err)
				}
				if c.except == nil {
					wantIDs, wantDist := Naive(data, n, dim, q, k)
					if !slices.Equal(ids, wantIDs) || !slices.Equal(dist, wantDist) {
						t.Fatalf("got %v, want %v", ids, wantIDs)
					}
					return
				}
				wantIDs, wantDist := Naive(sub, len(kept), dim, q, k)
				for i := range wantIDs {
					if ids[i] != kept[wantIDs[i]] || dist[i] != wantDist[i] {
						t.Fatalf("query %d rank %d: got %d (%.9g), want %d (%.9g)", i/k, i%k, ids[i], dist[i], kept[wantIDs[i]], wantDist[i])
					}
				}
			})
		}
	}
	if _, _, err := ix.SearchNear(q, 1, nil, make([][]int32, nq-1)); err == nil {
		t.Error("rows near fewer queries than searched accepted")
	}
	bad := make([][]int32, nq)
	bad[3] = []int32{n}
	if _, _, err := ix.SearchNear(q, 1, nil, bad); err == nil {
		t.Error("a row past the last near a query accepted")
	}
}

func TestBadArgs(t *testing.T) {
	if _, err := New(make([]float32, 5), 2, 3, gotch.CPU, Options{}); err == nil {
		t.Error("mismatched matrix accepted")
	}
	ix, err := New(make([]float32, 6), 2, 3, gotch.CPU, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ix.Search(make([]float32, 4), 1); err == nil {
		t.Error("ragged query accepted")
	}
	if _, _, err := ix.Search(make([]float32, 3), 3); err == nil {
		t.Error("k > n accepted")
	}
	ix.Close()
	if _, _, err := ix.Search(make([]float32, 3), 1); err == nil {
		t.Error("closed index searched")
	}
}

// TestSearchFreesTensors: a search leaves no tensor behind for the
// garbage collector's finalizers (the score block, the top-k results and
// their CPU copies are dropped when the search returns), so memory stays
// at the budget however many blocks a sweep searches.
func TestSearchFreesTensors(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n, dim := 500, 16
	ix, err := New(randMatrix(r, n, dim, 1), n, dim, testDevice(t), Options{Budget: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	q := randMatrix(r, 300, dim, 1) // 300 queries in blocks of 32: ten blocks
	if _, _, err := ix.Search(q, 3); err != nil {
		t.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no finalizer may free a leaked tensor meanwhile
	before := torchrt.LiveTensors()
	if _, _, err := ix.Search(q, 3); err != nil {
		t.Fatal(err)
	}
	if after := torchrt.LiveTensors(); after != before {
		t.Errorf("%d live tensors before a search, %d after: the search leaks %d", before, after, after-before)
	}
}

// TestSquaredDistances4: the four-row form equals SquaredDistance bit for
// bit (the exact ranking, and so every search's answer, rests on it).
func TestSquaredDistances4(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []int{1, 7, 300} {
		v := make([][]float32, 5)
		for i := range v {
			v[i] = make([]float32, dim)
			for j := range v[i] {
				v[i][j] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
			}
		}
		a, b, c, d := squaredDistances4(v[0], v[1], v[2], v[3], v[4])
		for i, got := range []float64{a, b, c, d} {
			if want := SquaredDistance(v[0], v[i+1]); got != want {
				t.Errorf("dim %d row %d: %v, SquaredDistance %v", dim, i, got, want)
			}
		}
	}
}

// TestCancellation: rows and query far from the origin and close to one
// another, so that every path's approximate score ‖e‖² − 2e·q (about
// −‖q‖²) carries a rounding error far larger than the gaps between the
// true distances: only the bounds keep the true nearest (a kernel whose
// δ were 0 keeps whichever row rounded lowest; so does int8-avx2 if
// refineF32's δ were 0).
func TestCancellation(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	const n, dim, nq = 200, 16, 20
	base := make([]float32, dim)
	for j := range base {
		base[j] = float32(1000 + 100*r.NormFloat64())
	}
	data := make([]float32, n*dim)
	for i := range n {
		for j := range dim {
			data[i*dim+j] = base[j] + float32(0.01*r.NormFloat64())
		}
	}
	q := make([]float32, nq*dim)
	for i := range nq {
		for j := range dim {
			q[i*dim+j] = base[j] + float32(0.01*r.NormFloat64())
		}
	}
	for _, k := range []int{1, 3} {
		wantIDs, wantDist := Naive(data, n, dim, q, k)
		for _, sc := range scorings(t) {
			ix, err := New(data, n, dim, deviceFor(t, sc), Options{Scoring: sc})
			if err != nil {
				t.Fatal(err)
			}
			ids, dist, err := ix.Search(q, k)
			ix.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids, wantIDs) || !slices.Equal(dist, wantDist) {
				t.Errorf("%s, k = %d: differs from Naive", sc, k)
			}
		}
	}
}

// TestFullFloat32: libtorch's float32 products on the device XP_DEVICE
// names keep float32's precision (libtorch's default; the float32 path's
// certificate assumes it), and the probe tells them from TF32's: the
// probe's product, rounded to 11 significant bits as TF32 rounds inputs,
// is what it refuses. Fails if the probe's values could pass TF32.
func TestFullFloat32(t *testing.T) {
	full, err := fullFloat32(testDevice(t))
	if err != nil {
		t.Fatal(err)
	}
	if !full {
		t.Errorf("float32 products on %v are not float32 (TF32?)", torchrt.DeviceString(testDevice(t)))
	}
	x := float32(1 + 1.0/(1<<12)) // the probe's value
	bits := math.Float32bits(x)
	tf32 := math.Float32frombits((bits + 1<<12) &^ (1<<13 - 1)) // to 10 fraction bits, nearest
	if tf32 == x {
		t.Errorf("TF32 keeps the probe's value %v", x)
	}
}
