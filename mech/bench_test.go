package mech

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/internal/realdata"
	"github.com/xp-nlp/xp/mech/knn"
	"github.com/xp-nlp/xp/torchrt"
)

// Regenerate docs/performance.md's table with
//
//	XP_DATA=../shared/data go test ./mech -run '^$' -bench . -benchtime 1x -timeout 60m
//
// Each Privatize op privatizes `tokens` random in-vocabulary tokens with
// the given search batch; "GFLOP/s" counts the 2·V·dim flops of scoring
// each token against every candidate, to compare with the plain libtorch
// matrix product of the same shape (BenchmarkMatmul), the roofline of
// exact search.

var benchSpaces = map[string]*Space{}

func benchSpace(b *testing.B, name string) *Space {
	if s, ok := benchSpaces[name]; ok {
		return s
	}
	torchrt.SetThreads(0)
	var e *embedding.Embedding
	switch name {
	case "fasttext300d", "fasttext50d":
		root := realdata.Root(b)
		file := map[string]string{"fasttext300d": "fasttext-sg-xpcorpus-300d.vec.gz", "fasttext50d": "fasttext-sg-xpcorpus-50d.vec.gz"}[name]
		var err error
		e, err = embedding.Load(context.Background(), filepath.Join(root, "embeddings", file),
			embedding.Options{CacheDir: filepath.Join(os.TempDir(), "xp-bench-cache")})
		if err != nil {
			b.Skipf("SKIP: %v", err)
		}
	case "synthetic400k":
		r := rand.New(rand.NewPCG(1, 1))
		e = &embedding.Embedding{Dim: 300, Source: "synthetic", Data: make([]float32, 400000*300)}
		for i := range e.Data {
			e.Data[i] = float32(r.NormFloat64() * 0.2)
		}
		for i := 0; i < 400000; i++ {
			e.Words = append(e.Words, "w"+strconv.Itoa(i))
		}
	}
	s, err := NewSpace(e, gotch.CPU, 1<<30)
	if err != nil {
		b.Fatal(err)
	}
	benchSpaces[name] = s
	return s
}

func randomDocs(s *Space, tokens int) [][]string {
	r := rand.New(rand.NewPCG(5, 5))
	d := make([]string, tokens)
	for i := range d {
		d[i] = s.Emb.Words[r.IntN(min(s.Emb.Len(), 20000))]
	}
	return [][]string{d}
}

func BenchmarkPrivatize(b *testing.B) {
	type run struct {
		space, mech string
		p           Params
		batches     []int
		eps         float64
	}
	runs := []run{
		{"fasttext300d", "laplace", nil, []int{1, 16, 256, 1024, 4096}, 10},
		{"fasttext300d", "vickrey", Params{"t": 0.5}, []int{1024}, 10},
		{"fasttext300d", "mahalanobis", Params{"lambda": 0.2}, []int{1024}, 10},
		{"fasttext300d", "santext", Params{"candidates": "embedding"}, []int{1024}, 3},
		{"fasttext300d", "tem", nil, []int{1024}, 3},
		{"synthetic400k", "laplace", nil, []int{1, 256, 4096}, 10},
	}
	for _, r := range runs {
		for _, batch := range r.batches {
			b.Run(fmt.Sprintf("%s/%s/batch=%d", r.space, r.mech, batch), func(b *testing.B) {
				s := benchSpace(b, r.space)
				tokens := max(4*batch, 256)
				if r.mech == "santext" || r.mech == "tem" {
					tokens = 2048
				}
				if batch == 1 {
					tokens = 64
				}
				m, err := New(r.mech, s, r.eps, r.p, Options{Batch: batch, Counts: map[string]int64{}})
				if err != nil {
					b.Fatal(err)
				}
				docs := randomDocs(s, tokens)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, _, err := m.Privatize(context.Background(), docs, Source{Seed: uint64(i)}); err != nil {
						b.Fatal(err)
					}
				}
				tps := float64(tokens*b.N) / b.Elapsed().Seconds()
				b.ReportMetric(tps, "tokens/s")
				b.ReportMetric(tps*2*float64(s.Emb.Len()*s.Emb.Dim)/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkMatmul is the roofline: the same process multiplies a batch ×
// 300 matrix by the 300 × V candidate matrix (float32, libtorch, CPU).
func BenchmarkMatmul(b *testing.B) {
	for _, c := range []struct {
		space string
		batch int
	}{{"fasttext300d", 1}, {"fasttext300d", 256}, {"fasttext300d", 4096}, {"synthetic400k", 1}, {"synthetic400k", 256}, {"synthetic400k", 4096}} {
		b.Run(fmt.Sprintf("%s/batch=%d", c.space, c.batch), func(b *testing.B) {
			s := benchSpace(b, c.space)
			n, dim := s.Emb.Len(), s.Emb.Dim
			err := torchrt.Do(func() error {
				e, err := ts.NewTensorFromData(s.Emb.Data, []int64{int64(n), int64(dim)})
				if err != nil {
					return err
				}
				defer e.Drop()
				et, err := e.Transpose(0, 1, false)
				if err != nil {
					return err
				}
				defer et.Drop()
				q, err := ts.Randn([]int64{int64(c.batch), int64(dim)}, gotch.Float, gotch.CPU)
				if err != nil {
					return err
				}
				defer q.Drop()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					p, err := q.Mm(et, false)
					if err != nil {
						return err
					}
					p.Drop()
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(2*c.batch*n*dim*b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkSanTextBudget privatizes 2,048 random tokens (about 1,900
// distinct words) with SanText over the 44k fastText vectors at a small
// memory budget (8 MiB: 23 words per block of distances) and the default
// (256 MiB): the output matrix is built once per privatization, so the
// small budget costs little more than the default.
func BenchmarkSanTextBudget(b *testing.B) {
	for _, budget := range []int64{8 << 20, 256 << 20} {
		b.Run(fmt.Sprintf("budget=%dMiB", budget>>20), func(b *testing.B) {
			s := benchSpace(b, "fasttext300d")
			m, err := New("santext", s, 3, Params{"candidates": "embedding"}, Options{Budget: budget})
			if err != nil {
				b.Fatal(err)
			}
			docs := randomDocs(s, 2048)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := m.Privatize(context.Background(), docs, Source{Seed: uint64(i)}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(2048*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkDrawsVsPrivatize compares word-level draws (40 words × 100
// draws, searched in shared batches and pruned to each word's nearest
// candidates where the noise allows: prune.go) with privatizing running
// text of the same number of tokens (never pruned), interleaved (P D P D
// …) in one run, 5 repeats each, over ε on the 300d and 50d fastText
// vectors; it reports the median ratio of lookups/s to tokens/s with min
// and max, and the share of draws pruned. The first repeat also searches
// each word's list (once per space, as an analysis does once per word).
// Run with
//
//	XP_DATA=../shared/data go test ./mech -run '^$' -bench DrawsVsPrivatize -benchtime 1x
func BenchmarkDrawsVsPrivatize(b *testing.B) {
	const rows, m, repeats = 40, 100, 5
	for _, space := range []string{"fasttext300d", "fasttext50d"} {
		for _, name := range []string{"laplace", "vickrey"} {
			for _, eps := range []float64{10, 50, 100, 200, 500, 1000} {
				b.Run(fmt.Sprintf("%s/%s/eps=%g", space, name, eps), func(b *testing.B) {
					s := benchSpace(b, space)
					docs := randomDocs(s, rows*m)
					words := make([]int, rows)
					for i := range words {
						words[i] = i * 37 % min(s.Emb.Len(), 20000)
					}
					mm, err := New(name, s, eps, nil, Options{})
					if err != nil {
						b.Fatal(err)
					}
					d := mm.(interface {
						Draws(ctx context.Context, rows []int, n int, src Source, f func(i int, outs []int32) error) error
					})
					ctx := context.Background()
					var ratios, drawRates []float64
					for i := 0; i < b.N*repeats; i++ {
						t0 := time.Now()
						if _, _, err := mm.Privatize(ctx, docs, Source{Seed: uint64(i)}); err != nil {
							b.Fatal(err)
						}
						p := float64(rows*m) / time.Since(t0).Seconds()
						t0 = time.Now()
						if err := d.Draws(ctx, words, m, Source{Seed: uint64(i)}, func(int, []int32) error { return nil }); err != nil {
							b.Fatal(err)
						}
						r := float64(rows*m) / time.Since(t0).Seconds()
						ratios, drawRates = append(ratios, r/p), append(drawRates, r)
					}
					slices.Sort(ratios)
					slices.Sort(drawRates)
					b.ReportMetric(drawRates[len(drawRates)/2], "lookups/s")
					b.ReportMetric(ratios[len(ratios)/2], "ratio-median")
					b.ReportMetric(ratios[0], "ratio-min")
					b.ReportMetric(ratios[len(ratios)-1], "ratio-max")
					b.ReportMetric(float64(noisyOf(mm).pruned)/float64(b.N*repeats*rows*m), "pruned-share")
				})
			}
		}
	}
}

// BenchmarkVersusLaplace measures each mechanism added beside the
// founding papers' against Laplace (batch 1,024) on the same 2,048 random
// tokens of the 44k fastText vocabulary (about 1,900 distinct words: the
// worst case for the exponential mechanisms, which compute one
// distribution per distinct word), interleaved (L M L M …) in one run,
// 3 repeats: the median ratio of tokens/s with min and max. Run with
//
//	XP_DATA=../shared/data go test ./mech -run '^$' -bench VersusLaplace -benchtime 1x
func BenchmarkVersusLaplace(b *testing.B) {
	s := benchSpace(b, "fasttext300d")
	const tokens, repeats = 2048, 3
	docs := randomDocs(s, tokens)
	lap, err := New("laplace", s, 3, nil, Options{Batch: 1024})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		label, name string
		eps         float64
		p           Params
	}{
		{"tem", "tem", 3, nil},
		{"diffractor", "diffractor", 3, nil},
		{"truncated-gumbel", "truncated-gumbel", 25, nil}, // the truncated Gumbel's calibration starts near ε = 15.2 on these vectors
		{"vickrey-mahalanobis", "vickrey", 3, Params{"t": 0.5, "lambda": 0.2}},
	} {
		b.Run(c.label, func(b *testing.B) {
			m, err := New(c.name, s, c.eps, c.p, Options{Batch: 1024})
			if err != nil {
				b.Fatal(err)
			}
			rate := func(m Mechanism, seed uint64) float64 {
				t0 := time.Now()
				if _, _, err := m.Privatize(context.Background(), docs, Source{Seed: seed}); err != nil {
					b.Fatal(err)
				}
				return tokens / time.Since(t0).Seconds()
			}
			var ratios, rates []float64
			for i := 0; i < b.N*repeats; i++ {
				l := rate(lap, uint64(i))
				r := rate(m, uint64(i))
				ratios, rates = append(ratios, r/l), append(rates, r)
			}
			slices.Sort(ratios)
			slices.Sort(rates)
			b.ReportMetric(rates[len(rates)/2], "tokens/s")
			b.ReportMetric(ratios[len(ratios)/2], "ratio-median")
			b.ReportMetric(ratios[0], "ratio-min")
			b.ReportMetric(ratios[len(ratios)-1], "ratio-max")
		})
	}
}

// BenchmarkSharedPrivatize measures common_noise's privatization of a
// split for Laplace and Vickrey t = 0.25, 0.5, 0.75, 1 at one ε
// (SharedPrivatize: one search of two neighbours per token, five picks)
// against the five privatizations it replaces, on the same 8,192
// random tokens of the 44k fastText vocabulary, batch 1,024,
// interleaved (shared, separate, …) in one run, 3 repeats: the median
// ratio of the separate runs' time to the shared one's, with min and
// max, and checks that both give the same tokens. Run with
//
//	XP_DATA=../shared/data go test ./mech -run '^$' -bench SharedPrivatize -benchtime 1x
func BenchmarkSharedPrivatize(b *testing.B) {
	s := benchSpace(b, "fasttext300d")
	const tokens, repeats = 8192, 3
	docs := randomDocs(s, tokens)
	for _, eps := range []float64{1, 10, 50} {
		b.Run(fmt.Sprintf("eps=%g", eps), func(b *testing.B) {
			var ms []Mechanism
			for _, p := range []Params{nil, {"t": 0.25}, {"t": 0.5}, {"t": 0.75}, {"t": 1.0}} {
				name := "vickrey"
				if p == nil {
					name = "laplace"
				}
				m, err := New(name, s, eps, p, Options{Batch: 1024})
				if err != nil {
					b.Fatal(err)
				}
				ms = append(ms, m)
			}
			ctx := context.Background()
			var ratios, rates []float64
			for i := 0; i < b.N*repeats; i++ {
				src := Source{Seed: uint64(i), Cell: "laplace eps", Split: "train"}
				t0 := time.Now()
				shared, _, err := SharedPrivatize(ctx, ms, docs, src)
				if err != nil {
					b.Fatal(err)
				}
				sh := time.Since(t0).Seconds()
				t0 = time.Now()
				for c, m := range ms {
					out, _, err := m.Privatize(ctx, docs, src)
					if err != nil {
						b.Fatal(err)
					}
					if !slices.Equal(out[0], shared[c][0]) {
						b.Fatalf("%s: the shared privatization's tokens differ from its own", m.Name())
					}
				}
				sep := time.Since(t0).Seconds()
				ratios, rates = append(ratios, sep/sh), append(rates, tokens/sh)
			}
			slices.Sort(ratios)
			slices.Sort(rates)
			b.ReportMetric(rates[len(rates)/2], "shared-tokens/s")
			b.ReportMetric(ratios[len(ratios)/2], "ratio-median")
			b.ReportMetric(ratios[0], "ratio-min")
			b.ReportMetric(ratios[len(ratios)-1], "ratio-max")
		})
	}
}

// BenchmarkScoring sets the scoring paths of exact search this machine
// runs (libtorch float32 products; the int8 path through libtorch, the
// GPU's, here on the CPU; knn's float32 kernel where the CPU has AVX2
// and FMA, and its int8 kernel where it has AVX-512 VNNI, each with its
// certified bound) against the plain float32 product of the
// same shape, the roofline of the float32 path: per repeat, the product
// (batch × dim by dim × V, as many rows as tokens), then privatization on
// each path, interleaved in one run, 3 repeats; it reports each path's
// tokens/s over the product's rows/s (median, min, max) and the share of
// the privatization's time spent in the search (median), and checks that
// every path privatizes to the float32 path's tokens (after one untimed
// round). Run with
//
//	XP_DATA=../shared/data go test ./mech -run '^$' -bench Scoring -benchtime 1x -timeout 60m
//
// With XP_DEVICE=cuda (a GPU machine) the product and the libtorch
// paths' indexes are on the GPU, and the CPU kernels are left out.
func BenchmarkScoring(b *testing.B) {
	dev, err := torchrt.ParseDevice(cmp.Or(os.Getenv("XP_DEVICE"), "cpu"))
	if err != nil {
		b.Fatalf("XP_DEVICE: %v", err)
	}
	paths := []knn.Scoring{knn.ScoringFloat32, knn.ScoringInt8Torch}
	for _, sc := range []knn.Scoring{knn.ScoringFloat32Kernel, knn.ScoringInt8AVX2, knn.ScoringInt8} {
		if dev != gotch.CPU {
			break
		}
		if ix, err := knn.New(make([]float32, 8), 1, 8, gotch.CPU, knn.Options{Scoring: sc}); err != nil {
			b.Logf("SKIP %s: %v", sc, err)
		} else {
			ix.Close()
			paths = append(paths, sc)
		}
	}
	const repeats = 3
	for _, r := range []struct {
		space, mech string
		p           Params
		batch       int
		tokens      int
	}{
		{"fasttext300d", "laplace", nil, 1024, 4096},
		{"fasttext300d", "laplace", nil, 4096, 16384},
		{"fasttext300d", "vickrey", Params{"t": 0.5}, 1024, 4096},
		{"fasttext300d", "mahalanobis", Params{"lambda": 0.2}, 1024, 4096},
		{"synthetic400k", "laplace", nil, 1024, 1024},
	} {
		b.Run(fmt.Sprintf("%s/%s/batch=%d", r.space, r.mech, r.batch), func(b *testing.B) {
			s := benchSpace(b, r.space)
			n, dim := s.Emb.Len(), s.Emb.Dim
			spaces := map[knn.Scoring]*Space{}
			for _, sc := range paths {
				ix, err := knn.New(s.Emb.Data, n, dim, dev, knn.Options{Budget: 1 << 30, Scoring: sc})
				if err != nil {
					b.Fatal(err)
				}
				defer ix.Close()
				spaces[sc] = &Space{Emb: s.Emb, Index: ix}
			}
			docs := randomDocs(s, r.tokens)
			product := func() float64 {
				var rate float64
				err := torchrt.Do(func() error {
					var sc torchrt.Scope
					defer sc.Drop()
					e, err := sc.Keep(ts.NewTensorFromData(s.Emb.Data, []int64{int64(n), int64(dim)}))
					if err != nil {
						return err
					}
					if e, err = sc.Keep(e.To(dev, false)); err != nil {
						return err
					}
					et, err := sc.Keep(e.Transpose(0, 1, false))
					if err != nil {
						return err
					}
					q, err := sc.Keep(ts.Randn([]int64{int64(r.batch), int64(dim)}, gotch.Float, dev))
					if err != nil {
						return err
					}
					sync := func() error { // a GPU's products are queued: wait for them
						if dev == gotch.CPU {
							return nil
						}
						return ts.CudaSynchronize(dev.Value)
					}
					if err := sync(); err != nil {
						return err
					}
					t0 := time.Now()
					for done := 0; done < r.tokens; done += r.batch {
						p, err := q.Mm(et, false)
						if err != nil {
							return err
						}
						p.Drop()
					}
					if err := sync(); err != nil {
						return err
					}
					rate = float64((r.tokens+r.batch-1)/r.batch*r.batch) / time.Since(t0).Seconds()
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				return rate
			}
			shares := map[knn.Scoring][]float64{} // of a privatization's time, in the search
			privatize := func(sc knn.Scoring, seed uint64) (float64, [][]string) {
				m, err := New(r.mech, spaces[sc], 10, r.p, Options{Batch: r.batch, Counts: map[string]int64{}})
				if err != nil {
					b.Fatal(err)
				}
				before := spaces[sc].Index.Stats().Searching
				t0 := time.Now()
				out, _, err := m.Privatize(context.Background(), docs, Source{Seed: seed})
				if err != nil {
					b.Fatal(err)
				}
				took := time.Since(t0)
				shares[sc] = append(shares[sc], float64(spaces[sc].Index.Stats().Searching-before)/float64(took))
				return float64(r.tokens) / took.Seconds(), out
			}
			// one round untimed: a process's first product and each
			// path's first batches (buffers, pools) ran slow, widening
			// the ranges (0.76–3.16 on 2026-11-26)
			product()
			for _, sc := range paths {
				privatize(sc, 1<<32)
			}
			clear(shares)
			ratios, rates := map[knn.Scoring][]float64{}, map[knn.Scoring][]float64{}
			var products []float64
			for i := 0; i < b.N*repeats; i++ {
				p := product()
				products = append(products, p)
				var want [][]string
				for _, sc := range paths {
					rate, out := privatize(sc, uint64(i))
					if sc == knn.ScoringFloat32 {
						want = out
					} else if !slices.EqualFunc(out, want, slices.Equal) {
						b.Fatalf("the %s and float32 paths privatized differently", sc)
					}
					ratios[sc] = append(ratios[sc], rate/p)
					rates[sc] = append(rates[sc], rate)
				}
			}
			slices.Sort(products)
			b.ReportMetric(products[len(products)/2], "product-rows/s")
			for _, sc := range paths {
				x := ratios[sc]
				slices.Sort(x)
				slices.Sort(rates[sc])
				b.ReportMetric(rates[sc][len(x)/2], string(sc)+"-tokens/s")
				b.ReportMetric(x[len(x)/2], string(sc)+"/product")
				b.ReportMetric(x[0], string(sc)+"/product-min")
				b.ReportMetric(x[len(x)-1], string(sc)+"/product-max")
				slices.Sort(shares[sc])
				b.ReportMetric(shares[sc][len(x)/2], string(sc)+"-search-share")
				if sc != knn.ScoringFloat32 {
					st := spaces[sc].Index.Stats()
					b.ReportMetric(float64(st.Kept)/float64(max(1, st.Queries-st.Fallbacks)), string(sc)+"-kept/query")
					b.ReportMetric(float64(st.Fallbacks), string(sc)+"-fallbacks")
				}
			}
		})
	}
}
