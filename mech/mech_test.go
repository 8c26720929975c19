package mech

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sugarme/gotch"
	"gonum.org/v1/gonum/mat"

	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/internal/doctest"
	"github.com/xp-nlp/xp/mech/knn"
	"github.com/xp-nlp/xp/spec"
)

// knownSpace indexes the named words with rows data (dim values each).
func knownSpace(t testing.TB, dim int, words []string, data []float32) *Space {
	t.Helper()
	s, err := NewSpace(&embedding.Embedding{Dim: dim, Format: "test", Source: "known", Words: words, Data: data}, gotch.CPU, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// lineSpace puts one word per coordinate on a line (1-d vectors).
func lineSpace(t testing.TB, xs ...float32) *Space {
	t.Helper()
	e := &embedding.Embedding{Dim: 1, Format: "test", Source: "line"}
	for i, x := range xs {
		e.Words = append(e.Words, "w"+string(rune('0'+i)))
		e.Data = append(e.Data, x)
	}
	s, err := NewSpace(e, gotch.CPU, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// tinySpace is a vocabulary of n words in dim dimensions.
func tinySpace(t testing.TB, n, dim int, seed uint64, scale float64) *Space {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	e := &embedding.Embedding{Dim: dim, Format: "test", Source: "tiny"}
	for i := 0; i < n; i++ {
		e.Words = append(e.Words, "w"+strconv.Itoa(i))
		for j := 0; j < dim; j++ {
			e.Data = append(e.Data, float32(r.NormFloat64()*scale))
		}
	}
	s, err := NewSpace(e, gotch.CPU, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func repeatDocs(word string, n int) [][]string {
	d := make([]string, n)
	for i := range d {
		d[i] = word
	}
	return [][]string{d}
}

func TestLaplaceNoiseMoments(t *testing.T) {
	const N = 20000
	for _, c := range []struct {
		n   int
		eps float64
	}{{2, 1}, {50, 5}, {300, 10}} {
		r := rand.New(rand.NewPCG(3, uint64(c.n)))
		z := make([]float64, c.n)
		var sumNorm float64
		mean := make([]float64, c.n)
		var sq float64 // Σ v_1²
		for i := 0; i < N; i++ {
			laplaceNoise(r, c.eps, z)
			var nn float64
			for _, x := range z {
				nn += x * x
			}
			norm := math.Sqrt(nn)
			sumNorm += norm
			for j, x := range z {
				mean[j] += x / norm / N
			}
			sq += z[0] * z[0] / nn / N
		}
		// ‖Z‖ ~ Gamma(n, 1/ε): mean n/ε, sd √n/ε.
		want, sd := float64(c.n)/c.eps, math.Sqrt(float64(c.n))/c.eps/math.Sqrt(N)
		if got := sumNorm / N; math.Abs(got-want) > 5*sd {
			t.Errorf("n=%d ε=%v: mean norm %.4f, want %.4f ± %.4f", c.n, c.eps, got, want, 5*sd)
		}
		// Uniform direction: E[v] = 0 (each coordinate sd 1/√(nN)), E[v_1²] = 1/n.
		for j, m := range mean {
			if math.Abs(m) > 5/math.Sqrt(float64(c.n)*N) {
				t.Errorf("n=%d: direction mean[%d] = %.4f", c.n, j, m)
				break
			}
		}
		if v := 1 / float64(c.n); math.Abs(sq-v) > 5*math.Sqrt(2*v*v/N)+1e-3 {
			t.Errorf("n=%d: E[v_1²] = %.4f, want %.4f", c.n, sq, v)
		}
	}
}

func TestGammaMoments(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, a := range []float64{1, 2, 300} {
		var s, s2 float64
		const N = 50000
		for i := 0; i < N; i++ {
			x := gammaDraw(r, a)
			s += x
			s2 += x * x
		}
		m, v := s/N, s2/N-(s/N)*(s/N)
		if math.Abs(m-a) > 5*math.Sqrt(a/N) || math.Abs(v-a)/a > 0.05 {
			t.Errorf("gammaDraw(%v): mean %.3f var %.3f", a, m, v)
		}
	}
}

// outputDist estimates Pr[M(w) = y] for every y by privatizing N copies of w.
func outputDist(t *testing.T, m Mechanism, s *Space, w, N int, seed uint64) []float64 {
	out, _, err := m.Privatize(context.Background(), repeatDocs(s.Emb.Words[w], N), Source{Seed: seed, Cell: "dp"})
	if err != nil {
		t.Fatal(err)
	}
	p := make([]float64, s.Emb.Len())
	for _, o := range out[0] {
		i, _ := s.Emb.Index(o)
		p[i] += 1.0 / float64(N)
	}
	return p
}

func dist(a, b []float32) float64 { return math.Sqrt(sqd(a, b)) }

func sqd(a, b []float32) float64 { return knn.SquaredDistance(a, b) }

// checkDP verifies Pr[M(w)=y] ≤ exp(ε·d(w,w′))·Pr[M(w′)=y] for all pairs
// within a Monte Carlo tolerance, and returns the number of violations.
func checkDP(t *testing.T, p [][]float64, d func(i, j int) float64, eps float64, N int) int {
	bad := 0
	for w := range p {
		for w2 := range p {
			bound := math.Exp(eps * d(w, w2))
			for y := range p[w] {
				// 4.5 standard errors of each estimate, propagated.
				se := func(q float64) float64 { return math.Sqrt(math.Max(q, 1.0/float64(N)) * (1 - q) / float64(N)) }
				tol := 4.5 * (se(p[w][y]) + bound*se(p[w2][y]))
				if p[w][y] > bound*p[w2][y]+tol {
					bad++
					if bad <= 3 {
						t.Logf("Pr[M(%d)=%d]=%.4f > e^(εd)=%.3f × Pr[M(%d)=%d]=%.4f (+tol %.4f)", w, y, p[w][y], bound, w2, y, p[w2][y], tol)
					}
				}
			}
		}
	}
	return bad
}

func TestMetricDPMonteCarlo(t *testing.T) {
	const N = 20000
	s := tinySpace(t, 5, 2, 11, 1)
	eu := func(i, j int) float64 { return dist(s.Emb.Vector(i), s.Emb.Vector(j)) }
	mahal, err := NewMahalanobis(s, 1.5, 0.5, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Mahalanobis' own metric: ‖Σ_p^{−1/2}(x − y)‖.
	sq := mat.NewDense(2, 2, mahal.sqrt)
	var inv mat.Dense
	if err := inv.Inverse(sq); err != nil {
		t.Fatal(err)
	}
	md := func(i, j int) float64 {
		a, b := s.Emb.Vector(i), s.Emb.Vector(j)
		x := mat.NewVecDense(2, []float64{float64(a[0] - b[0]), float64(a[1] - b[1])})
		var y mat.VecDense
		y.MulVec(&inv, x)
		return y.Norm(2)
	}
	lap, _ := NewLaplace(s, 1.5, 0)
	vick, _ := NewVickrey(s, 1.5, VickreyParams{T: 0.5}, 0)
	vickEx, _ := NewVickrey(s, 1.5, VickreyParams{T: 0.5, ExcludeInput: true}, 0)
	vickM, _ := NewVickrey(s, 1.5, VickreyParams{T: 0.5, Mahalanobis: true, Lambda: 0.5}, 0)
	cases := []struct {
		m       Mechanism
		d       func(i, j int) float64
		violate bool
	}{{lap, eu, false}, {vick, eu, false}, {mahal, md, false}, {vickM, md, false}, {vickEx, eu, true}}
	for _, c := range cases {
		t.Run(c.m.Name(), func(t *testing.T) {
			p := make([][]float64, 5)
			for w := range p {
				p[w] = outputDist(t, c.m, s, w, N, 5)
			}
			bad := checkDP(t, p, c.d, c.m.Epsilon(), N)
			if c.violate && bad == 0 {
				t.Error("input exclusion should break the metric-DP bound (Pr[M(w)=w] = 0) and the test did not see it")
			}
			if !c.violate && bad > 0 {
				t.Errorf("%d violations of the ε·d bound", bad)
			}
		})
	}
}

func TestSanTextExactBound(t *testing.T) {
	s := tinySpace(t, 40, 3, 4, 1)
	m, err := NewSanText(s, 2, SanTextParams{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, m, s)
}

// checkExact verifies the ε·d bound on the exact probabilities of every
// pair of the space's words (all of them candidates) and that sampled
// frequencies of word 3 match them; it returns the probabilities.
func checkExact(t *testing.T, m *SanText, s *Space) [][]float64 {
	t.Helper()
	probs := make([][]float64, s.Emb.Len())
	for w := range probs {
		_, probs[w], _ = m.Probabilities(w)
	}
	for w := range probs {
		for w2 := range probs {
			bound := math.Exp(m.eps * dist(s.Emb.Vector(w), s.Emb.Vector(w2)))
			for y := range probs[w] {
				if probs[w][y] > bound*probs[w2][y]*(1+1e-9) {
					t.Fatalf("Pr[%d→%d]=%g > %g × Pr[%d→%d]=%g", w, y, probs[w][y], bound, w2, y, probs[w2][y])
				}
			}
		}
	}
	const N = 40000
	freq := outputDist(t, m, s, 3, N, 1)
	for y, p := range probs[3] {
		if math.Abs(freq[y]-p) > 4.5*math.Sqrt(p*(1-p)/N)+1e-4 {
			t.Errorf("Pr[3→%d]: sampled %.4f, exact %.4f", y, freq[y], p)
		}
	}
	return probs
}

// TestSanTextPlusSensitiveSet: the sensitive words are the least
// frequent fraction of the task vocabulary — words of the task's texts,
// with or without a vector — not of the embedding (whose words mostly
// never occur in the task and would all rank least frequent).
func TestSanTextPlusSensitiveSet(t *testing.T) {
	s := tinySpace(t, 10, 2, 5, 1) // w0 … w9
	// The task uses w0 … w4 and "novec" (no vector); w5 … w9 never occur.
	counts := map[string]int64{"w0": 50, "w1": 40, "w2": 30, "w3": 3, "w4": 1, "novec": 1}
	// |V| = 6, ⌊0.5·6⌋ = 3 sensitive: w3, then w4 and novec (tied at 1, by word).
	if got := sensitiveWords(counts, 0.5); !slices.Equal(got, []string{"w3", "novec", "w4"}) {
		t.Fatalf("sensitive words %v, want [w3 novec w4]", got)
	}
	m, err := NewSanText(s, 3, SanTextParams{Plus: &SanTextPlus{P: 0.3, SensitiveFraction: 0.5, Counts: counts}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.outputs, []int32{3, 4}) {
		t.Fatalf("outputs %v, want rows [3 4]: the sensitive task words with a vector", m.outputs)
	}
	for row, want := range []bool{false, false, false, true, true, false, false, false, false, false} {
		if m.Sensitive(row) != want {
			t.Errorf("row %d sensitive = %v", row, !want)
		}
	}
	const N = 20000
	freq := outputDist(t, m, s, 0, N, 2) // w0 is not sensitive: kept with probability 0.7
	if math.Abs(freq[0]-0.7) > 4.5*math.Sqrt(0.21/N) {
		t.Errorf("non-sensitive word kept with frequency %.4f, want 0.7", freq[0])
	}
	if math.Abs(freq[3]+freq[4]-0.3) > 4.5*math.Sqrt(0.21/N) {
		t.Errorf("non-sensitive word sanitized into the sensitive set with frequency %.4f, want 0.3", freq[3]+freq[4])
	}
	for y := 1; y < 10; y++ {
		if y != 3 && y != 4 && freq[y] != 0 {
			t.Errorf("word %d outside the sensitive set was output", y)
		}
	}
	if m.Notion() != spec.NoDP {
		t.Error("SanText+ claims a guarantee for non-sensitive words")
	}
	// The set is a property of the task vocabulary: every split sees the same one.
	m2, _ := NewSanText(s, 7, SanTextParams{Plus: &SanTextPlus{P: 0.9, SensitiveFraction: 0.5, Counts: counts}}, 0)
	if !slices.Equal(m.outputs, m2.outputs) {
		t.Error("the sensitive set depends on ε or p")
	}
}

func TestVickreyZeroIsLaplace(t *testing.T) {
	s := tinySpace(t, 200, 4, 1, 1)
	docs := [][]string{repeatDocs("w3", 500)[0], {"w1", "oov", "w7"}}
	lap, _ := NewLaplace(s, 2, 0)
	vick, _ := NewVickrey(s, 2, VickreyParams{T: 0}, 0)
	a, ra, err := lap.Privatize(context.Background(), docs, Source{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := vick.Privatize(context.Background(), docs, Source{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(a, b, slices.Equal) {
		t.Error("Vickrey t = 0 differs from Laplace on the same noise")
	}
	if ra.OOV != 1 || b[1][1] != "oov" || ra.Tokens != 503 {
		t.Errorf("OOV handling: %+v, %q", ra, b[1])
	}
}

// TestVickreyMahalanobisNoise: Vickrey with lambda draws the Mahalanobis
// mechanism's noise, so at t = 0 it is the Mahalanobis mechanism on the
// same streams, and at t = 0.5 it differs from Vickrey over Laplace noise.
func TestVickreyMahalanobisNoise(t *testing.T) {
	s := tinySpace(t, 200, 4, 1, 1)
	docs := [][]string{repeatDocs("w3", 500)[0], {"w1", "oov", "w7"}}
	priv := func(m Mechanism, err error) [][]string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := m.Privatize(context.Background(), docs, Source{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	mahal := priv(New("mahalanobis", s, 2, Params{"lambda": 0.5}, Options{}))
	vm0 := priv(New("vickrey", s, 2, Params{"t": 0.0, "lambda": 0.5}, Options{}))
	if !slices.EqualFunc(mahal, vm0, slices.Equal) {
		t.Error("Vickrey t = 0 with lambda differs from Mahalanobis on the same noise")
	}
	vm := priv(New("vickrey", s, 2, Params{"t": 0.5, "lambda": 0.5}, Options{}))
	vl := priv(New("vickrey", s, 2, Params{"t": 0.5}, Options{}))
	if slices.EqualFunc(vm, vl, slices.Equal) {
		t.Error("lambda did not change Vickrey's noise")
	}
	m, _ := New("vickrey", s, 2, Params{"lambda": 0.25}, Options{})
	if m.Name() != "vickrey(t=0.5,lambda=0.25)" {
		t.Errorf("name %q", m.Name())
	}
}

// TestVickreyChoiceFrequency runs Vickrey on N tokens and compares how
// often it output the nearer neighbour with the average of p(t) over the
// same noise (recomputed here from the same streams): a swapped d1/d2 or
// a softmax in place of p(t) fails.
func TestVickreyChoiceFrequency(t *testing.T) {
	s := tinySpace(t, 30, 3, 2, 1)
	const N = 20000
	for _, tt := range []float64{0.25, 0.5, 0.75, 1} {
		v, _ := NewVickrey(s, 3, VickreyParams{T: tt}, 0)
		src := Source{Seed: 4, Cell: "v"}
		out, _, err := v.Privatize(context.Background(), repeatDocs("w0", N), src)
		if err != nil {
			t.Fatal(err)
		}
		var first, pSum, pVar float64
		z := make([]float64, 3)
		q := make([]float32, 3)
		for pos := 0; pos < N; pos++ {
			r := src.Token(0, pos)
			laplaceNoise(r, 3, z)
			for i := range q {
				q[i] = float32(float64(s.Emb.Vector(0)[i]) + z[i])
			}
			ids, d := naive2(s, q)
			p := (1 - tt) * d[1] / (tt*d[0] + (1-tt)*d[1])
			pSum += p
			pVar += p * (1 - p)
			if out[0][pos] == s.Emb.Words[ids[0]] {
				first++
			}
		}
		if math.Abs(first-pSum) > 4.5*math.Sqrt(pVar)+1 {
			t.Errorf("t=%v: nearer neighbour chosen %v times, expected %.1f ± %.1f", tt, first, pSum, math.Sqrt(pVar))
		}
	}
}

func naive2(s *Space, q []float32) ([2]int, [2]float64) {
	ids, d := [2]int{-1, -1}, [2]float64{math.Inf(1), math.Inf(1)}
	for i := 0; i < s.Emb.Len(); i++ {
		x := dist(q, s.Emb.Vector(i))
		switch {
		case x < d[0]:
			ids[1], d[1] = ids[0], d[0]
			ids[0], d[0] = i, x
		case x < d[1]:
			ids[1], d[1] = i, x
		}
	}
	return ids, d
}

func TestDeterministicAcrossBatches(t *testing.T) {
	s := tinySpace(t, 300, 8, 3, 1)
	r := rand.New(rand.NewPCG(1, 1))
	var docs [][]string
	for i := 0; i < 40; i++ {
		var d []string
		for j := 0; j < 1+r.IntN(30); j++ {
			d = append(d, s.Emb.Words[r.IntN(300)])
		}
		docs = append(docs, d)
	}
	counts := map[string]int64{}
	for _, d := range docs {
		for _, w := range d {
			counts[w]++
		}
	}
	// The truncated Gumbel mechanism's calibration needs a larger Δmin
	// than these vectors have at ε = 4.
	params := map[string]Params{"truncated-gumbel": {"min_dist": 10.0, "max_dist": 20.0}}
	for _, name := range []string{"laplace", "vickrey", "mahalanobis", "santext", "tem", "diffractor", "truncated-gumbel"} {
		var ref [][]string
		for _, batch := range []int{1, 7, 4096} {
			m, err := New(name, s, 4, params[name], Options{Batch: batch, Budget: int64(batch) * 8 * 300, Counts: counts})
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := m.Privatize(context.Background(), docs, Source{Seed: 9, Cell: name, Split: "train"})
			if err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref = out
			} else if !slices.EqualFunc(ref, out, slices.Equal) {
				t.Errorf("%s: batch %d changed the output", name, batch)
			}
		}
		m, err := New(name, s, 4, params[name], Options{Counts: counts})
		if err != nil {
			t.Fatal(err)
		}
		other, _, _ := m.Privatize(context.Background(), docs, Source{Seed: 10, Cell: name, Split: "train"})
		if slices.EqualFunc(ref, other, slices.Equal) {
			t.Errorf("%s: a different seed gave the same output", name)
		}
	}
}

// TestRulesOnePlace: every rule is the descriptor's, so New (as a config
// reaches it) and the typed constructors accept and refuse alike.
func TestRulesOnePlace(t *testing.T) {
	s := tinySpace(t, 10, 2, 1, 1)
	counts := map[string]int64{"w1": 3, "w2": 1}
	inf := math.Inf(1)
	cases := []struct {
		name  string
		eps   float64
		p     Params
		typed func() error
		want  string // "" accepted
	}{
		{"laplace", inf, nil, func() error { _, err := NewLaplace(s, inf, 0); return err }, "ε = +Inf, want a finite value > 0"},
		{"laplace", 0, nil, func() error { _, err := NewLaplace(s, 0, 0); return err }, "ε = 0"},
		{"vickrey", 1, Params{"t": 1.5}, func() error { _, err := NewVickrey(s, 1, VickreyParams{T: 1.5}, 0); return err }, "parameter t = 1.5"},
		{"vickrey", 1, Params{"t_r": []any{0.5, 2.0}}, func() error { _, err := NewVickrey(s, 1, VickreyParams{TR: []float64{0.5, 2}}, 0); return err }, ""},
		{"vickrey", 1, Params{"t_r": []any{0.5, -1.0}}, func() error { _, err := NewVickrey(s, 1, VickreyParams{TR: []float64{0.5, -1}}, 0); return err }, "parameter t_r"},
		{"vickrey", 1, Params{"rank": 2, "t_r": []any{1.0, 2.0}}, func() error {
			_, err := NewVickrey(s, 1, VickreyParams{Rank: 2, TR: []float64{1, 2}}, 0)
			return err
		}, "different variants"},
		{"vickrey", inf, Params{"rank": 2}, func() error { _, err := NewVickrey(s, inf, VickreyParams{Rank: 2}, 0); return err }, "ε = +Inf"},
		{"mahalanobis", 1, Params{"lambda": -0.1}, func() error { _, err := NewMahalanobis(s, 1, -0.1, 0); return err }, "parameter lambda = -0.1"},
		{"santext", inf, nil, func() error { _, err := NewSanText(s, inf, SanTextParams{}, 0); return err }, "ε = +Inf"},
		{"santext+", 1, Params{"sensitive": 0.0}, func() error {
			_, err := NewSanText(s, 1, SanTextParams{Plus: &SanTextPlus{P: 0.3, Counts: counts}}, 0)
			return err
		}, "parameter sensitive = 0"},
		{"tem", 1, Params{"beta": 1.0}, func() error { _, err := NewTEM(s, 1, TEMParams{Beta: 1}, 0); return err }, "parameter beta = 1"},
		{"tem", 1, Params{"gamma": -2.0}, func() error { _, err := NewTEM(s, 1, TEMParams{Gamma: -2}, 0); return err }, "parameter gamma = -2"},
		{"tem", inf, nil, func() error { _, err := NewTEM(s, inf, TEMParams{Beta: 0.001}, 0); return err }, "ε = +Inf"},
		{"tem", 1, Params{"gamma": 3.0}, func() error { _, err := NewTEM(s, 1, TEMParams{Gamma: 3}, 0); return err }, ""},
		{"diffractor", 1, Params{"method": "laplace"}, func() error { _, err := NewDiffractor(s, 1, DiffractorParams{Method: "laplace"}, nil); return err }, `parameter method = "laplace"`},
		{"diffractor", 1, Params{"gamma": 0}, func() error {
			_, err := NewDiffractor(s, 1, DiffractorParams{Method: "tem", Gamma: -1}, nil)
			return err
		}, "parameter gamma"},
		{"custext", 1, Params{"k": 0}, func() error { _, err := NewCusText(s, 1, CusTextParams{K: 0}, counts); return err }, "parameter k = 0"},
		{"custext", inf, Params{"k": 3}, func() error { _, err := NewCusText(s, inf, CusTextParams{K: 3}, counts); return err }, "ε = +Inf"},
		{"custext", 1, Params{"k": 11}, func() error { _, err := NewCusText(s, 1, CusTextParams{K: 11}, counts); return err }, "vocabulary has 10 words"},
		{"custext+", 1, Params{"k": 3, "mapping": "greedy"}, func() error {
			_, err := NewCusText(s, 1, CusTextParams{K: 3, Mapping: "greedy", KeepStopwords: true}, counts)
			return err
		}, `parameter mapping = "greedy"`},
	}
	for _, c := range cases {
		_, errNew := New(c.name, s, c.eps, c.p, Options{Counts: counts})
		errTyped := c.typed()
		for how, err := range map[string]error{"New": errNew, "constructor": errTyped} {
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s %s ε=%v %v: refused: %v", how, c.name, c.eps, c.p, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s %s ε=%v %v: got %v, want %q", how, c.name, c.eps, c.p, err, c.want)
			}
		}
	}
	if _, err := New("santext+", s, 1, nil, Options{}); err == nil {
		t.Error("santext+ without task counts accepted")
	}
	if _, err := New("nope", s, 1, nil, Options{}); err == nil || !strings.Contains(err.Error(), "known: custext") {
		t.Errorf("unknown mechanism: %v", err)
	}
}

// TestEveryDescriptorBuilt: each mechanism spec describes has one kind
// here, nothing is registered that spec does not describe, and a kind's
// exact flag says whether its mechanism implements Distributions (what
// the estimates read before any mechanism is built).
func TestEveryDescriptorBuilt(t *testing.T) {
	names := spec.Names(spec.Mechanism)
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k.name] {
			t.Errorf("%s registered twice", k.name)
		}
		seen[k.name] = true
		if !slices.Contains(names, k.name) {
			t.Errorf("mech registers %s, which spec does not describe", k.name)
		}
	}
	for _, n := range names {
		if !seen[n] {
			t.Errorf("spec describes %s; mech does not build it", n)
		}
	}
	s := tinySpace(t, 200, 6, 4, 1)
	counts := map[string]int64{}
	for i, w := range s.Emb.Words {
		counts[w] = int64(200 - i)
	}
	for _, k := range kinds {
		m, err := New(k.name, s, 30, nil, Options{Counts: counts}) // ε within every calibration's range
		if err != nil {
			t.Errorf("%s: %v", k.name, err)
			continue
		}
		_, dist := m.(interface {
			Distributions(ctx context.Context, rows []int, f func(w int, outs []int32, p []float64) error) error
		})
		if dist != k.exact {
			t.Errorf("%s: exact %v, but implements Distributions: %v", k.name, k.exact, dist)
		}
	}
}

// TestDrawsEqualPrivatize: batched word draws give exactly the outputs of
// n single-token Privatize calls per word under WordSource, whatever the
// search batch and whichever other words share it.
func TestDrawsEqualPrivatize(t *testing.T) {
	s := tinySpace(t, 200, 6, 4, 1)
	src := Source{Seed: 3, Cell: "c"}
	const n = 13
	for _, name := range []string{"laplace", "vickrey", "mahalanobis"} {
		for _, batch := range []int{1, 5, 1024} {
			m, err := New(name, s, 3, nil, Options{Batch: batch})
			if err != nil {
				t.Fatal(err)
			}
			for _, rows := range [][]int{{7, 3, 150}, {150}} {
				drawsEqualPrivatize(t, m, s, rows, n, src, fmt.Sprintf("%s batch %d rows %v", name, batch, rows))
			}
		}
	}
}

// TestSanTextCandidates pins SanText's output set as the authors' code
// builds it: by default the task's words that have a vector (here w1, w4
// and w7 of ten; "novec" has none), with candidates: embedding every
// word of the vectors. Probabilities are the softmax of −ε·d/2 over that
// set, and the privatized text never leaves it.
func TestSanTextCandidates(t *testing.T) {
	s := tinySpace(t, 10, 3, 9, 1)
	counts := map[string]int64{"w7": 5, "w1": 2, "w4": 1, "novec": 3}
	for _, c := range []struct {
		params Params
		want   []int32
	}{
		{nil, []int32{1, 4, 7}},
		{Params{"candidates": "task"}, []int32{1, 4, 7}},
		{Params{"candidates": "embedding"}, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
	} {
		m, err := New("santext", s, 2, c.params, Options{Counts: counts})
		if err != nil {
			t.Fatal(err)
		}
		outs, p, err := m.(*SanText).Probabilities(4)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(outs, c.want) {
			t.Fatalf("%v: candidates %v, want %v", c.params, outs, c.want)
		}
		var z float64
		for _, o := range outs {
			z += math.Exp(-dist(s.Emb.Vector(4), s.Emb.Vector(int(o))))
		}
		for j, o := range outs {
			if want := math.Exp(-dist(s.Emb.Vector(4), s.Emb.Vector(int(o)))) / z; math.Abs(p[j]-want) > 1e-12 {
				t.Errorf("%v: Pr[w4→%d] = %v, want %v", c.params, o, p[j], want)
			}
		}
		got, rep, err := m.Privatize(context.Background(), repeatDocs("w0", 300), Source{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if rep.CandidateCount != len(c.want) {
			t.Errorf("%v: report says %d candidates, want %d", c.params, rep.CandidateCount, len(c.want))
		}
		for _, w := range got[0] {
			r, _ := s.Emb.Index(w)
			if !slices.Contains(c.want, int32(r)) {
				t.Fatalf("%v: output %s is not a candidate", c.params, w)
			}
		}
	}
	if _, err := New("santext", s, 2, nil, Options{}); err == nil {
		t.Error("candidates task without the task's counts was accepted")
	}
}

// TestProgressReachesMechanisms: every mechanism but CusText (which
// draws from precomputed distributions) takes Options.Progress through
// setProgress; a mechanism added without it would privatize silently.
// Exact names exactly the mechanisms with Distributions.
func TestProgressReachesMechanisms(t *testing.T) {
	s := tinySpace(t, 20, 2, 1, 1)
	counts := map[string]int64{}
	for _, w := range s.Emb.Words {
		counts[w] = 1
	}
	for _, n := range spec.Names(spec.Mechanism) {
		eps := 1.0
		if n == "truncated-gumbel" {
			eps = 100 // its calibration's range on these vectors starts near 15
		}
		m, err := New(n, s, eps, nil, Options{Counts: counts})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(progressor); !ok && !strings.HasPrefix(n, "custext") {
			t.Errorf("%s has no setProgress", n)
		}
		_, exact := m.(interface {
			Distributions(ctx context.Context, rows []int, f func(w int, outs []int32, p []float64) error) error
		})
		if exact != Exact(n) {
			t.Errorf("%s: Exact says %v, its type %v", n, Exact(n), exact)
		}
	}
}

// TestPrunedDrawsExact: word-level draws answered from the word's list of
// nearest candidates (prune.go) equal Privatize's full searches, for
// every noisy mechanism from small ε (no draw can be pruned) to large
// (nearly all are), with duplicated vectors (a word whose list starts at
// its lower-row twin is never pruned), with and without the searches
// seeded from the lists (seedDraws draws a word, and fewer).
func TestPrunedDrawsExact(t *testing.T) {
	s := tinySpace(t, 700, 5, 9, 1) // more words than a list holds
	for _, dup := range [][2]int{{3, 40}, {12, 13}, {100, 90}} {
		copy(s.Emb.Data[dup[1]*5:(dup[1]+1)*5], s.Emb.Data[dup[0]*5:(dup[0]+1)*5])
	}
	ix, err := knn.New(s.Emb.Data, s.Emb.Len(), s.Emb.Dim, gotch.CPU, knn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Index.Close()
	s.Index = ix
	src := Source{Seed: 5, Cell: "prune"}
	rows := []int{40, 3, 13, 12, 90, 250, 699}
	for _, n := range []int{40, seedDraws} {
		for _, c := range []struct {
			name string
			p    Params
		}{{"laplace", nil}, {"vickrey", Params{"t": 0.5}}, {"vickrey", Params{"exclude_input": true}}, {"mahalanobis", nil}} {
			var pruned []int64
			for _, eps := range []float64{0.3, 3, 30, 3000} {
				m, err := New(c.name, s, eps, c.p, Options{Batch: 16})
				if err != nil {
					t.Fatal(err)
				}
				drawsEqualPrivatize(t, m, s, rows, n, src, fmt.Sprintf("%s%v ε=%v n=%d", c.name, c.p, eps, n))
				pruned = append(pruned, noisyOf(m).pruned)
			}
			t.Logf("%s%v, %d draws a word: pruned draws at ε = 0.3, 3, 30, 3000: %v of %d", c.name, c.p, n, pruned, len(rows)*n)
			// rows 40 and 13 are the higher twins of 3 and 12: never pruned.
			if pruned[0] != 0 || pruned[3] != int64(len(rows)-2)*int64(n) {
				t.Errorf("%s%v: pruned %v of %d draws per ε: want none at ε = 0.3 and all but the twins' at ε = 3000", c.name, c.p, pruned, len(rows)*n)
			}
		}
	}
}

// TestDrawsSearchListsToSeed: a word drawn seedDraws times has its list
// searched, to seed its draws' searches, where the index uses rows near
// its queries (int8-avx2), even at an ε where no draw can be pruned;
// drawn fewer times, or on an index that does not use them, it has not
// (the list would cost about four draws for nothing).
func TestDrawsSearchListsToSeed(t *testing.T) {
	for _, c := range []struct {
		name string
		sc   knn.Scoring
		n    int
		want bool
	}{
		{"int8-avx2", knn.ScoringInt8AVX2, seedDraws, true},
		{"int8-avx2, fewer draws", knn.ScoringInt8AVX2, seedDraws - 1, false},
		{"float32", knn.ScoringFloat32, seedDraws, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := tinySpace(t, 700, 5, 9, 1)
			ix, err := knn.New(s.Emb.Data, s.Emb.Len(), s.Emb.Dim, gotch.CPU, knn.Options{Scoring: c.sc})
			if err != nil {
				t.Skipf("SKIP: %v", err)
			}
			s.Index.Close()
			s.Index = ix
			m, err := New("laplace", s, 0.3, nil, Options{Batch: 16}) // ‖z‖ ≈ 17: no draw may prune
			if err != nil {
				t.Fatal(err)
			}
			drawsEqualPrivatize(t, m, s, []int{3, 250, 699}, c.n, Source{Seed: 1}, c.name)
			if got := len(s.lists) > 0; got != c.want {
				t.Errorf("lists searched: %v (%d), want %v", got, len(s.lists), c.want)
			}
		})
	}
}

// TestNeighboursPrefetch: a missing list brings the lists of the rows
// named beside it in the same search, each equal to its own search's; a
// kept list brings none.
func TestNeighboursPrefetch(t *testing.T) {
	s, lone := tinySpace(t, 700, 5, 9, 1), tinySpace(t, 700, 5, 9, 1)
	if _, err := s.neighbours([]int{3}, []int{1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	if len(s.lists) != 5 {
		t.Fatalf("%d lists kept after asking for row 3 with rows 1–5 beside it, want 5", len(s.lists))
	}
	for w := 1; w <= 5; w++ {
		want, err := lone.neighbours([]int{w}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.lists[w]; !slices.Equal(got.ids, want[0].ids) || !slices.Equal(got.dist, want[0].dist) {
			t.Errorf("row %d: the list searched beside row 3 differs from its own search's", w)
		}
	}
	if _, err := s.neighbours([]int{3}, []int{6, 7}); err != nil {
		t.Fatal(err)
	}
	if len(s.lists) != 5 {
		t.Errorf("%d lists kept after asking again for a kept one, want 5", len(s.lists))
	}
}

// TestMayPrune: the test that spares a draw its word's list never turns
// away a draw the list answers, and does turn away the draws of noise far
// larger than the vectors.
func TestMayPrune(t *testing.T) {
	s := tinySpace(t, 700, 5, 9, 1)
	r := rand.New(rand.NewPCG(3, 4))
	z := make([]float64, s.Emb.Dim)
	q := make([]float32, s.Emb.Dim)
	ids, dist := make([]int32, 2), make([]float64, 2)
	for _, eps := range []float64{0.3, 3, 10, 30, 300, 3000} {
		var may, answered int
		for i := 0; i < 400; i++ {
			w := r.IntN(s.Emb.Len())
			laplaceNoise(r, eps, z)
			for j, x := range s.Emb.Vector(w) {
				q[j] = float32(float64(x) + z[j])
			}
			lists, err := s.neighbours([]int{w}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ok := s.mayPrune(w, q)
			if pruned(s, lists[0], w, q, 2, ids, dist) {
				answered++
				if !ok {
					t.Fatalf("ε = %v, word %d: the list answers a draw mayPrune turns away", eps, w)
				}
			}
			if ok {
				may++
			}
		}
		t.Logf("ε = %v: %d of 400 draws may prune, %d answered by the list", eps, may, answered)
		if eps == 0.3 && may > 20 {
			t.Errorf("ε = 0.3: %d of 400 draws sent to the lists, want at most 20 (mean noise norm %.0f)", may, float64(s.Emb.Dim)/eps)
		}
		if eps == 3 && may > 350 { // the L-th smallest norm's bound: 293; the largest norm's sent 388
			t.Errorf("ε = 3: %d of 400 draws sent to the lists, want at most 350", may)
		}
	}
}

// drawsEqualPrivatize checks that m's n draws of each row equal n
// single-token Privatize calls of the word under WordSource.
func drawsEqualPrivatize(t *testing.T, m Mechanism, s *Space, rows []int, n int, src Source, what string) {
	t.Helper()
	d, ok := m.(interface {
		Draws(ctx context.Context, rows []int, n int, src Source, f func(i int, outs []int32) error) error
	})
	if !ok {
		t.Fatalf("%s: no Draws", what)
	}
	got := map[int][]int32{}
	if err := d.Draws(context.Background(), rows, n, src, func(i int, outs []int32) error {
		got[rows[i]] = slices.Clone(outs)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, w := range rows {
		word := s.Emb.Words[w]
		docs := make([][]string, n)
		for j := range docs {
			docs[j] = []string{word}
		}
		priv, _, err := m.Privatize(context.Background(), docs, WordSource(src, word))
		if err != nil {
			t.Fatal(err)
		}
		for j, doc := range priv {
			if o, _ := s.Emb.Index(doc[0]); int32(o) != got[w][j] {
				t.Fatalf("%s: word %s draw %d is %d, Privatize gives %s", what, word, j, got[w][j], doc[0])
			}
		}
	}
}

// noisyOf is the noisy-nearest-neighbour driver of m.
func noisyOf(m Mechanism) *noisyNN {
	switch m := m.(type) {
	case *Laplace:
		return &m.noisyNN
	case *Vickrey:
		return &m.noisyNN
	case *Mahalanobis:
		return &m.noisyNN
	}
	return nil
}

// TestPerturbStopsWhenCancelled: a sweep cancelled while one batch's
// search is in flight stops at the next batch with the context's error,
// having emitted only whole batches in order, and leaves no search
// running (perturb waits for it). Draws of 3 rows × 40 in batches of 16:
// the callback cancels after the first row.
func TestPerturbStopsWhenCancelled(t *testing.T) {
	s := tinySpace(t, 300, 8, 3, 1)
	m, err := New("laplace", s, 4, nil, Options{Batch: 16})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls []int
	d := m.(interface {
		Draws(ctx context.Context, rows []int, n int, src Source, f func(i int, outs []int32) error) error
	})
	err = d.Draws(ctx, []int{1, 2, 3}, 40, Source{Seed: 1}, func(i int, _ []int32) error {
		calls = append(calls, i)
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Draws after cancel: %v, want context.Canceled", err)
	}
	if !slices.Equal(calls, []int{0}) {
		t.Errorf("rows answered after cancel: %v, want [0]", calls)
	}
	if q := s.Index.Stats().Queries; q > 4*16 { // the cancel comes in the third batch's outputs, the fourth's search flies
		t.Errorf("%d queries searched: more than the batches up to the cancel and the one in flight", q)
	}
}

// TestSpaceBatch: a mechanism built without Options.Batch searches in
// its space's batches (a GPU space's 4,096), and Options.Batch overrides
// them. Fails if New ignores the space's batch.
func TestSpaceBatch(t *testing.T) {
	s := tinySpace(t, 50, 8, 3, 1)
	s.Batch = 7
	for _, c := range []struct{ opt, want int }{{0, 7}, {5, 5}} {
		m, err := New("laplace", s, 4, nil, Options{Batch: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.(*Laplace).batch; got != c.want {
			t.Errorf("Options.Batch %d: batch %d, want %d", c.opt, got, c.want)
		}
	}
}

// noiseFamilies are settings that draw one noise (SharedDraws,
// SharedPrivatize): Laplace's with Vickrey's variants, and the
// Mahalanobis mechanism's with Vickrey's at its λ.
var noiseFamilies = [][]mechSetting{
	{{"laplace", nil}, {"vickrey", Params{"t": 0.25}}, {"vickrey", Params{"t": 1.0}}, {"vickrey", Params{"exclude_input": true}},
		{"vickrey", Params{"rank": 3}}, {"vickrey", Params{"t_r": []float64{0.5, 1, 2}}}},
	{{"vickrey", Params{"t": 0.5, "lambda": 0.3}}, {"mahalanobis", Params{"lambda": 0.3}}},
}

type mechSetting struct {
	name string
	p    Params
}

// newFamily builds the settings fam at ε over s (search batch 16).
func newFamily(t *testing.T, s *Space, eps float64, fam []mechSetting) []Mechanism {
	t.Helper()
	var ms []Mechanism
	for _, c := range fam {
		m, err := New(c.name, s, eps, c.p, Options{Batch: 16})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// TestSharedDrawsEqualDraws: mechanisms that draw the same noise, drawn
// together by SharedDraws (one search of the most neighbours any needs,
// each pick from its own copy of the stream), give each mechanism's own
// Draws outputs bit for bit — with the draws pruned, searched and seeded
// from the words' lists (ε from 0.3 to 3,000, 40 and seedDraws draws) —
// and mechanisms whose noise differs are refused (by SharedPrivatize too).
func TestSharedDrawsEqualDraws(t *testing.T) {
	s := tinySpace(t, 700, 5, 9, 1)
	src := Source{Seed: 7, Cell: "laplace eps=3"}
	rows := []int{40, 3, 13, 250, 699}
	for _, fam := range noiseFamilies {
		for _, n := range []int{40, seedDraws} {
			for _, eps := range []float64{0.3, 3, 30, 3000} {
				ms := newFamily(t, s, eps, fam)
				got := make([]map[int][]int32, len(ms))
				for c := range got {
					got[c] = map[int][]int32{}
				}
				calls := 0
				if err := SharedDraws(context.Background(), ms, rows, n, src, func(c, i int, outs []int32) error {
					got[c][rows[i]] = slices.Clone(outs)
					calls++
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if calls != len(ms)*len(rows) {
					t.Fatalf("%d calls of f, want %d", calls, len(ms)*len(rows))
				}
				for c, m := range ms {
					what := fmt.Sprintf("%s ε=%v n=%d", m.Name(), eps, n)
					differs := false
					if err := noisyOf(m).Draws(context.Background(), rows, n, src, func(i int, outs []int32) error {
						if !slices.Equal(outs, got[c][rows[i]]) {
							t.Errorf("%s: word %d: shared draws %v, alone %v", what, rows[i], got[c][rows[i]], outs)
						}
						differs = differs || c > 0 && !slices.Equal(outs, got[0][rows[i]])
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					if c > 0 && eps == 3 && !differs {
						t.Errorf("%s: the same outputs as %s: the test would not see a pick's mix-up", what, ms[0].Name())
					}
				}
			}
		}
	}
	lap, _ := New("laplace", s, 3, nil, Options{})
	for _, other := range []struct {
		name string
		eps  float64
		p    Params
	}{{"laplace", 4, nil}, {"mahalanobis", 3, nil}, {"vickrey", 3, Params{"lambda": 0.2}}, {"santext", 3, Params{"candidates": "embedding"}}} {
		m, err := New(other.name, s, other.eps, other.p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := SharedDraws(context.Background(), []Mechanism{lap, m}, rows, 4, src, func(int, int, []int32) error { return nil }); err == nil {
			t.Errorf("laplace at ε = 3 and %s at ε = %v share draws: want refused", m.Name(), other.eps)
		}
		if _, _, err := SharedPrivatize(context.Background(), []Mechanism{lap, m}, [][]string{{"w1", "w2"}}, src); err == nil {
			t.Errorf("laplace at ε = 3 and %s at ε = %v share a privatization: want refused", m.Name(), other.eps)
		}
	}
}

// TestSharedPrivatizeEqualsPrivatize: privatizing running text for
// several mechanisms of one noise at once gives each the output and
// report of its own Privatize, bit for bit (out-of-vocabulary tokens,
// batches that end mid-document, ε where nothing changes to ε where
// everything does); TestSharedDrawsEqualDraws checks that mechanisms of
// other noise are refused.
func TestSharedPrivatizeEqualsPrivatize(t *testing.T) {
	s := tinySpace(t, 700, 5, 9, 1)
	src := Source{Seed: 7, Cell: "laplace eps=3", Split: "train"}
	r := rand.New(rand.NewPCG(3, 4))
	docs := make([][]string, 9)
	for i := range docs {
		for j := 0; j < 5+r.IntN(30); j++ {
			w := "w" + strconv.Itoa(r.IntN(700))
			if r.IntN(10) == 0 {
				w = "oov" + strconv.Itoa(j)
			}
			docs[i] = append(docs[i], w)
		}
	}
	for _, fam := range noiseFamilies {
		fam = slices.Clone(fam)
		slices.Reverse(fam) // another driver than SharedDraws's test's
		for _, eps := range []float64{0.3, 3, 30, 3000} {
			ms := newFamily(t, s, eps, fam)
			outs, reps, err := SharedPrivatize(context.Background(), ms, docs, src)
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != len(ms) || len(reps) != len(ms) {
				t.Fatalf("%d outputs and %d reports for %d mechanisms", len(outs), len(reps), len(ms))
			}
			for c, m := range ms {
				what := fmt.Sprintf("%s ε=%v", m.Name(), eps)
				out, rep, err := m.Privatize(context.Background(), docs, src)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(out, outs[c]) {
					t.Errorf("%s: shared privatization %v, alone %v", what, outs[c], out)
				}
				if !reflect.DeepEqual(rep, reps[c]) {
					t.Errorf("%s: shared report %+v, alone %+v", what, reps[c], rep)
				}
				if c > 0 && eps == 3 && reflect.DeepEqual(outs[c], outs[0]) {
					t.Errorf("%s: the same output as %s: the test would not see a pick's mix-up", what, ms[0].Name())
				}
			}
		}
	}
}

// TestPackageDocNamesEveryKind: the package doc names every mechanism
// registered here, each by its config name in brackets (it named 5 of
// 10, by their papers' names only).
func TestPackageDocNamesEveryKind(t *testing.T) {
	named, err := doctest.Bracketed("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if !named[k.name] {
			t.Errorf("mech/doc.go does not name %s (in brackets)", k.name)
		}
	}
}
