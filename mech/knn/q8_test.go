package knn

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/internal/realdata"
)

// TestInt8BoundIsTight builds the int8 path's worst cases: a query q and
// a row a whose every coordinate rounds in the direction that overstates
// the score (q̂ below q, â below a, all positive), so the approximate
// score exceeds the true one by almost the bound; a's true score is just
// below 0, the score of the other row (the zero vector, scored exactly).
// The int8 path must keep a, so its bound may understate the worst error
// by no more than the 1% margin it adds. In "hölder" every rounding is
// almost half a step (Hölder's bound is the tight one); in
// "cauchy-schwarz" each rounding is proportional to the other vector's
// coordinate (Cauchy–Schwarz's is). Either fails for a bound 3% too small
// (int8-avx2 takes Cauchy–Schwarz's bound alone, q8.go: for it only
// "cauchy-schwarz" is tight, and "hölder" checks that it keeps the row).
func TestInt8BoundIsTight(t *testing.T) {
	// the int8 kernel's and int8-torch's grid (127 steps), and int8-avx2's
	// (45); every path must pass on either
	for _, L := range []float64{127, float64(q8AVX2.level)} {
		t.Run(fmt.Sprintf("L=%g", L), func(t *testing.T) { testInt8BoundIsTight(t, L) })
	}
}

func testInt8BoundIsTight(t *testing.T, L float64) {
	// The row below is found by moving its coordinates across their
	// grid one at a time, each move raising its true score by up to
	// ≈ 2·sa·q_j: on a coarse grid only more dimensions (a larger error)
	// leave a window of 1% of the error that no move jumps over.
	dim := 256
	if L < 127 {
		dim = 1024
	}
	const eta = 0.001                        // roundings of at most 0.5 − eta steps
	ts, sa := float32(1.0/L), float32(1.9/L) // grids out of step: a(c) moves one coordinate at a time
	for _, c := range []struct {
		name string
		frac func(steps, max float64) float64 // a rounding, in steps, of a coordinate of steps (of max)
	}{
		{"hölder", func(float64, float64) float64 { return 0.5 - eta }},
		{"cauchy-schwarz", func(steps, max float64) float64 { return (0.5 - eta) * steps / max }},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := make([]float32, dim)
			for j := range q {
				steps := L // coordinate 0 sets the scale: max|q| = L·ts
				if j > 0 {
					steps = math.Floor(L*40/127) + float64(j%int(L*80/127)) // 40 + j%80 at L = 127
					steps += c.frac(steps, L)
				}
				q[j] = float32(steps * float64(ts))
			}
			// row(k) ≈ k·q on its own grid, every coordinate rounding down.
			row := func(k float64) (a []float32, trueScore, err float64) {
				a = make([]float32, dim)
				for j := range a {
					// (each coordinate at its own pace: equal q_j would
					// cross their grid lines together)
					e := math.Floor(k * float64(q[j]) * (1 + float64(j)*1e-6) / float64(sa))
					if j == 0 {
						e = L // ê₀ = L·sa, the row's max, exact
					}
					a[j] = float32((e + c.frac(float64(q[j]), float64(q[0]))) * float64(sa))
					if j == 0 {
						a[j] = float32(L) * sa
					}
				}
				var n2, dot, dotHat float64
				for j := range a {
					n2 += float64(a[j]) * float64(a[j])
					dot += float64(a[j]) * float64(q[j])
					dotHat += float64(sa) * math.RoundToEven(float64(a[j])/float64(sa)) * float64(ts) * math.RoundToEven(float64(q[j])/float64(ts))
				}
				return a, n2 - 2*dot, 2 * (dot - dotHat)
			}
			var a []float32
			for k := 1.98; k < 2.05; k += 1e-6 {
				r, s, e := row(k)
				if s < 0 && s > -0.01*e {
					a = r
					t.Logf("k = %.5f: true score %.4g, approximation overstates it by %.4g", k, s, e)
					break
				}
			}
			if a == nil {
				t.Fatal("no row with a true score within 1% of the error below 0")
			}
			if slices.Max(a) > float32(L)*sa*(1+1e-6) {
				t.Fatalf("row's max %g above its scale's %g", slices.Max(a), float32(L)*sa)
			}
			// The row must be kept whether it comes first or after the
			// zero row has set the threshold to 0 (a block later: the
			// kernel's first test, at the matrix's largest row values,
			// must not pass over it there).
			far := make([]float32, dim)
			for j := range far {
				far[j] = -q[j] // score 3‖q‖²
			}
			after := make([]float32, dim) // the zero row
			for range 15 {
				after = append(after, far...)
			}
			for _, l := range []struct {
				name string
				data []float32
				want int32
			}{
				{"first", append(append([]float32(nil), a...), make([]float32, dim)...), 0},
				{"a block after the zero row", append(after, a...), 16},
			} {
				for _, sc := range scorings(t) {
					n := len(l.data) / dim
					ix, err := New(l.data, n, dim, deviceFor(t, sc), Options{Scoring: sc})
					if err != nil {
						t.Fatal(err)
					}
					ids, _, err := ix.Search(q, 1)
					ix.Close()
					if err != nil {
						t.Fatal(err)
					}
					if ids[0] != l.want {
						t.Errorf("%s, %s: nearest row %d, want %d (the row whose approximate score is overstated)", l.name, sc, ids[0], l.want)
					}
				}
			}
		})
	}
}

// TestInt8LargeK: a search for many neighbours (the neighbours analysis
// asks for 1,001) keeps them all within the int8 path's buffer instead of
// rescanning every query exactly, and still equals Naive.
func TestInt8LargeK(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	n, dim, k := 3000, 16, 1001
	data := randMatrix(r, n, dim, 1)
	q := randMatrix(r, 9, dim, 1)
	wantIDs, wantDist := Naive(data, n, dim, q, k)
	for _, sc := range scorings(t) {
		if sc == ScoringFloat32 {
			continue
		}
		ix, err := New(data, n, dim, deviceFor(t, sc), Options{Scoring: sc})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		ids, dist, err := ix.Search(q, k)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids, wantIDs) || !slices.Equal(dist, wantDist) {
			t.Fatalf("%s: differs from Naive", sc)
		}
		if st := ix.Stats(); st.Fallbacks != 0 {
			t.Errorf("%s: %d of %d queries rescanned exactly at k = %d", sc, st.Fallbacks, st.Queries, k)
		}
	}
}

// TestRealVectorsEqualNaive: on the real fastText 300d vectors (44k
// words), noisy copies of words at the noise of ε = 1, 25 and 100
// (Laplace: ‖z‖ ≈ 300/ε) and at almost none, every scoring path this
// machine runs answers exactly as Naive does, for k = 1 and 2.
func TestRealVectorsEqualNaive(t *testing.T) {
	e := fastText300d(t)
	r := rand.New(rand.NewPCG(11, 12))
	var q []float32
	for _, norm := range []float64{300, 12, 3, 1e-3} {
		for range 16 {
			q = noisyCopy(r, q, e.Vector(r.IntN(e.Len())), norm)
		}
	}
	for _, k := range []int{1, 2} {
		wantIDs, wantDist := Naive(e.Data, e.Len(), e.Dim, q, k)
		for _, sc := range scorings(t) {
			ix, err := New(e.Data, e.Len(), e.Dim, deviceFor(t, sc), Options{Scoring: sc})
			if err != nil {
				t.Fatal(err)
			}
			ids, dist, err := ix.Search(q, k)
			st := ix.Stats()
			ix.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids, wantIDs) || !slices.Equal(dist, wantDist) {
				t.Errorf("%s, k = %d: differs from Naive", sc, k)
			}
			t.Logf("%s, k = %d: %+v", sc, k, st)
		}
	}
}

// BenchmarkInt8Kernel times the scanning kernels' selection alone
// (quantizing the queries, the kernel, collecting the kept rows; no exact
// re-rank) on the real fastText 300d vectors: 1,024 noisy copies (‖z‖ =
// 12, the Laplace noise of ε = 25) of one word, all cores, k = 1, five
// repeats interleaved (A B C A B C …) where the CPU runs several. It
// reports each kernel's median multiply-adds per second (of the n × dim
// products, padding not counted) and rows kept per query. A register-only
// VNNI loop runs 3.6 instructions (64 multiply-adds each) per ns per core
// on the 2026-11-25 machine; an FMA loop 53.6 multiply-adds per ns on the
// Zen 2 one (docs/performance.md).
func BenchmarkInt8Kernel(b *testing.B) {
	e := fastText300d(b)
	ks := scanners(b, e.Data, e.Len(), e.Dim)
	r := rand.New(rand.NewPCG(1, 2))
	const nq = 1024
	q := make([]float32, 0, nq*e.Dim)
	w, _ := e.Index("happy")
	for range nq {
		q = noisyCopy(r, q, e.Vector(w), 12)
	}
	macs := float64(nq) * float64(e.Len()) * float64(e.Dim)
	secs := make([][]float64, len(ks))
	kept := make([]float64, len(ks))
	b.ResetTimer()
	for range b.N {
		for range 5 {
			for j, k := range ks {
				t0 := time.Now()
				rows, _ := k.sc.selectRows(q, e.Dim, 1, nil, nil)
				secs[j] = append(secs[j], time.Since(t0).Seconds())
				kept[j] = 0
				for _, r := range rows {
					kept[j] += float64(len(r)) / nq
				}
			}
		}
	}
	for j, k := range ks {
		slices.Sort(secs[j])
		b.ReportMetric(macs/secs[j][len(secs[j])/2]/1e9, k.name+"-GMAC/s")
		b.ReportMetric(kept[j], k.name+"-kept/query")
	}
}

// TestInt8AVX2Extremes: rows and queries at the ends of int8-avx2's range
// in every coordinate (each row and query all ±1, so every value
// quantizes to ±45 and every row byte to 0 or 90) fill each int16 lane
// of the kernel's four-group sums to ±32,400: the most the level allows
// before int16 wraps (q8.h). A wrapped sum would score the matching row
// far away and lose it. Every scoring path answers as Naive does.
func TestInt8AVX2Extremes(t *testing.T) {
	const dim = 64
	var data []float32
	sign := func(pattern, j int) float32 { // all +1, all −1, halves, alternating
		switch pattern {
		case 0:
			return 1
		case 1:
			return -1
		case 2:
			if j < dim/2 {
				return 1
			}
			return -1
		default:
			if j%2 == 0 {
				return 1
			}
			return -1
		}
	}
	for p := range 4 {
		for j := range dim {
			data = append(data, sign(p, j))
		}
	}
	n := len(data) / dim
	q := append([]float32(nil), data...)
	for _, sc := range scorings(t) {
		ix, err := New(data, n, dim, deviceFor(t, sc), Options{Scoring: sc})
		if err != nil {
			t.Fatal(err)
		}
		ids, dist, err := ix.Search(q, 2)
		ix.Close()
		if err != nil {
			t.Fatal(err)
		}
		wantIDs, wantDist := Naive(data, n, dim, q, 2)
		if !slices.Equal(ids, wantIDs) || !slices.Equal(dist, wantDist) {
			t.Errorf("%s: %v %v, want %v %v", sc, ids, dist, wantIDs, wantDist)
		}
	}
}

// TestOutward: the AVX2 kernel's norms lie at least 8u·‖e‖² outside the
// true ‖e‖² (q8.go: the slack its rounding needs), given a float32 norm
// within u of it, and +∞ stays +∞.
func TestOutward(t *testing.T) {
	const u = 1.0 / (1 << 24)
	r := rand.New(rand.NewPCG(3, 4))
	var norms []float64
	for range 10000 {
		norms = append(norms, math.Exp(r.Float64()*40-20))
	}
	norms = append(norms, 1, 0.75, math.MaxFloat32/2, 1e-30)
	for _, n := range norms {
		v := float32(n) // the float32 norm of a true norm n
		lo, hi := outward([]float32{v})
		if float64(lo[0]) > n*(1-8*u) || float64(hi[0]) < n*(1+8*u) {
			t.Fatalf("norm %v: outward gives [%v, %v], not 8u outside", n, lo[0], hi[0])
		}
	}
	lo, hi := outward([]float32{float32(math.Inf(1))})
	if !math.IsInf(float64(lo[0]), 1) || !math.IsInf(float64(hi[0]), 1) {
		t.Fatalf("+Inf: outward gives [%v, %v]", lo[0], hi[0])
	}
}

// TestSeedKeepsNearest: a scanning kernel started from a seed (seedOf of
// rows near each query) still keeps every query's true k nearest, or
// says it overflowed (nil). The rows near a query are its nearest one
// repeated (a seed that counted the repeats would be that row's bound
// alone, below the k-th nearest's score for k ≥ 2), rows the search
// excepts (a seed that counted them would be below the nearest row left),
// and its own nearest rows. (SearchNear would mend a lost row by an
// exact scan where fewer than k rows are kept: this test looks at the
// kernel's rows themselves.)
func TestSeedKeepsNearest(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const n, dim, nq = 1500, 40, 96
	data := randMatrix(r, n, dim, 1)
	ks := scanners(t, data, n, dim)
	q := make([]float32, nq*dim)
	for i := 0; i < nq; i++ {
		row := r.IntN(n)
		for j := 0; j < dim; j++ {
			q[i*dim+j] = data[row*dim+j] + float32(r.NormFloat64()*0.3)
		}
	}
	except := make([]bool, n)
	for i := range except {
		except[i] = r.Float64() < 0.3
	}
	const m = 12
	nearest, _ := Naive(data, n, dim, q, m)
	for _, k := range []int{1, 2, 4} {
		for _, c := range []struct {
			name   string
			except bool
			near   func(i int) []int32
		}{
			{"own", false, func(i int) []int32 { return nearest[i*m : (i+1)*m] }},
			{"repeated", false, func(i int) []int32 { return slices.Repeat(nearest[i*m:i*m+1], 2*k) }},
			{"excepted", true, func(i int) []int32 { return nearest[i*m : (i+1)*m] }},
		} {
			// the true k nearest of the rows left
			var sub []float32
			var left []int32
			for i := 0; i < n; i++ {
				if !c.except || !except[i] {
					left = append(left, int32(i))
					sub = append(sub, data[i*dim:(i+1)*dim]...)
				}
			}
			want, _ := Naive(sub, len(left), dim, q, k)
			for _, kn := range ks {
				t.Run(fmt.Sprintf("k=%d/%s/%s", k, c.name, kn.name), func(t *testing.T) {
					var norm []float32
					if c.except {
						norm = slices.Clone(kn.sc.rowNorms())
						for i, e := range except {
							if e {
								norm[i] = float32(math.Inf(1))
							}
						}
					}
					rn := norm
					if rn == nil {
						rn = kn.sc.rowNorms()
					}
					seed := make([]float32, nq)
					seeded := 0
					for i := range seed {
						seed[i] = seedOf(data, rn, kn.sc.rowEN(), q[i*dim:(i+1)*dim], k, c.near(i))
						if seed[i] < math.MaxFloat32 {
							seeded++
						}
					}
					rows, _ := kn.sc.selectRows(q, dim, k, norm, seed)
					for i, kept := range rows {
						if kept == nil {
							continue
						}
						for _, w := range want[i*k : (i+1)*k] {
							if !slices.Contains(kept, left[w]) {
								t.Fatalf("query %d: row %d, among its %d nearest, not kept (seed %g; kept %v)", i, left[w], k, seed[i], kept)
							}
						}
					}
					if c.name == "own" && seeded != nq {
						t.Errorf("%d of %d queries seeded by their own nearest rows", seeded, nq)
					}
				})
			}
		}
	}
}

// BenchmarkSeed times the scanning kernels' selection (as
// BenchmarkInt8Kernel) started from +∞ and from the seed of each
// query's word's 16 nearest rows (SearchNear; mech's draws tell their
// search so), on the real fastText 300d vectors: 1,024 noisy copies of
// random words (‖z‖ = 30, 12 and 6, Laplace's at ε = 10, 25 and 50),
// k = 1 and 2, all cores, unseeded and seeded (the seeds' computation
// timed with it) interleaved five times. It
// reports the median multiply-adds per second of each, the seeded over
// the unseeded, and the rows each keeps a query.
func BenchmarkSeed(b *testing.B) {
	e := fastText300d(b)
	ks := scanners(b, e.Data, e.Len(), e.Dim)
	const nq, m = 1024, 16
	r := rand.New(rand.NewPCG(1, 2))
	words := make([]float32, 0, nq*e.Dim)
	for range nq {
		words = append(words, e.Vector(r.IntN(e.Len()))...)
	}
	ix, err := New(e.Data, e.Len(), e.Dim, gotch.CPU, Options{})
	if err != nil {
		b.Fatal(err)
	}
	lists, _, err := ix.Search(words, m)
	ix.Close()
	if err != nil {
		b.Fatal(err)
	}
	for _, zn := range []float64{30, 12, 6} {
		q := make([]float32, 0, nq*e.Dim)
		for i := range nq {
			q = noisyCopy(r, q, words[i*e.Dim:(i+1)*e.Dim], zn)
		}
		for _, k := range []int{1, 2} {
			for _, kn := range ks {
				b.Run(fmt.Sprintf("z=%g/k=%d/%s", zn, k, kn.name), func(b *testing.B) {
					var secs [2][]float64
					var kept [2]float64
					for range b.N {
						for range 5 {
							for s := range 2 {
								t0 := time.Now()
								var seed []float32
								if s == 1 {
									seed = make([]float32, nq) // as searchScan computes them
									parallel(nq/64, func(c int) {
										for i := c * 64; i < (c+1)*64; i++ {
											seed[i] = seedOf(e.Data, kn.sc.rowNorms(), kn.sc.rowEN(), q[i*e.Dim:(i+1)*e.Dim], k, lists[i*m:(i+1)*m])
										}
									})
								}
								rows, _ := kn.sc.selectRows(q, e.Dim, k, nil, seed)
								secs[s] = append(secs[s], time.Since(t0).Seconds())
								kept[s] = 0
								for _, r := range rows {
									kept[s] += float64(len(r)) / nq
								}
							}
						}
					}
					macs := float64(nq) * float64(e.Len()) * float64(e.Dim)
					for s, name := range []string{"unseeded", "seeded"} {
						slices.Sort(secs[s])
						b.ReportMetric(macs/secs[s][len(secs[s])/2]/1e9, name+"-GMAC/s")
						b.ReportMetric(kept[s], name+"-kept/query")
					}
					b.ReportMetric(secs[0][len(secs[0])/2]/secs[1][len(secs[1])/2], "speed-up")
				})
			}
		}
	}
}

// namedScanner is a scanning kernel and the name tests report it by.
type namedScanner struct {
	name string
	sc   scanner
}

// scanners lays the n × dim matrix data out for each scanning kernel
// this CPU runs (VNNI, int8-avx2, float32), saying which it skips, and
// skips the test where there is none.
func scanners(t testing.TB, data []float32, n, dim int) []namedScanner {
	var ks []namedScanner
	if ok, why := Int8Available(); ok {
		ks = append(ks, namedScanner{"vnni", newQ8(data, n, dim, q8VNNI)})
	} else {
		t.Logf("SKIP vnni: %s", why)
	}
	if q8aSupported() {
		ks = append(ks, namedScanner{"avx2", newQ8(data, n, dim, q8AVX2)})
	}
	if f32Supported() {
		ks = append(ks, namedScanner{"float32", newF32(data, n, dim)})
	}
	if len(ks) == 0 {
		t.Skip("SKIP: no scanning kernel runs on this CPU")
	}
	return ks
}

// fastText300d is the real fastText 300d vectors from the data root,
// skipping the test where they are absent.
func fastText300d(b testing.TB) *embedding.Embedding {
	root := realdata.Root(b)
	e, err := embedding.Load(context.Background(), filepath.Join(root, "embeddings", "fasttext-sg-xpcorpus-300d.vec.gz"),
		embedding.Options{CacheDir: filepath.Join(os.TempDir(), "xp-bench-cache")})
	if err != nil {
		b.Skipf("SKIP: %v", err)
	}
	return e
}

// noisyCopy appends to q the vector v plus noise of norm n in a
// uniformly random direction (one of r's normal draws a dimension).
func noisyCopy(r *rand.Rand, q, v []float32, n float64) []float32 {
	z := make([]float64, len(v))
	var z2 float64
	for j := range z {
		z[j] = r.NormFloat64()
		z2 += z[j] * z[j]
	}
	for j, x := range v {
		q = append(q, x+float32(n*z[j]/math.Sqrt(z2)))
	}
	return q
}
