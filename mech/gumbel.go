package mech

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// Gumbel is the truncated Gumbel mechanism (Carvalho, Vasiloudis and
// Feyisetan, FLAIRS 2021) as sjmeis/MLDP's TruncatedGumbel implements it
// (the LREC-COLING 2024 benchmark's code; the paper itself could not be
// read here): for a word w,
//
//  1. draw k from a Poisson distribution of mean ln(|W| − 1), truncated
//     to at most |W| − 1 (k = 0 returns w);
//  2. take the k nearest words of φ(w) (w itself first), add to each
//     distance an independent Gumbel(0, b) draw truncated to
//     [−Δmax, Δmax], and output the word of the smallest noisy distance.
//
// The scale comes from ε, Δmin and Δmax (the smallest and the largest
// distance between words): a = (ε − 2(1 + ln|W|)/Δmin)/3 and
// b = 2Δmax / min(W₀(2aΔmax), ln(aΔmin)), W₀ the principal Lambert W.
// That gives a positive, finite scale only when a·Δmin > 1, that is
// ε > (2(1 + ln|W|) + 3)/Δmin; below it MLDP's code takes the real part
// of a complex Lambert W or a negative scale (which numpy refuses), and
// xp refuses the ε with the bound in the error.
//
// Choices against MLDP's code: it measures Δmin and Δmax from one word
// drawn at random when the mechanism is made (so its calibration changes
// from one instance to the next); xp takes them from the vectors' first
// word (the most frequent in GloVe and fastText files), so the scale is a
// function of the vectors and ε, unless the config gives min_dist and
// max_dist. Its neighbour search is faiss's approximate IVF index; xp's is
// exact. The truncated draws are exact inverse-CDF samples on the
// interval, where MLDP rejects and redraws: the same distributions.
//
// No guarantee is reported (spec.NoDP), though ε·d metric DP (d
// Euclidean) is what the mechanism is offered with, and Bound states it:
// the output is one of the input's k nearest words, k ≤ |W| − 1, so a
// word's farthest word is never its output while that word outputs
// itself with probability at least Pr[k ≤ 1]: an infinite loss between
// them, whatever ε and the scale. More generally y ranked r from x is
// output with probability at most Pr[k > r] (LogProbCeiling), which falls
// like 1/r! while ε·d(x, y) grows slowly with r. The privacy audit
// (analysis dp-audit) reads that ceiling and reports the violations. The
// output distribution has no closed form, so analyses draw.
type Gumbel struct {
	eps        float64
	space      *Space
	minD, maxD float64 // Δmin, Δmax
	scale      float64 // b
	mean       float64 // the Poisson mean ln(|W| − 1)
	progress   io.Writer

	mu     sync.Mutex
	ranked map[int][]rankedRow // LogProbCeiling's sorted distances by input row
}

// GumbelParams configure the truncated Gumbel mechanism; zero distances
// are measured from the vectors' first word.
type GumbelParams struct {
	MinDist, MaxDist float64
}

// NewGumbel returns the truncated Gumbel mechanism at ε over space's words.
func NewGumbel(space *Space, eps float64, p GumbelParams) (*Gumbel, error) {
	raw := map[string]any{}
	if p.MinDist != 0 {
		raw["min_dist"] = p.MinDist
	}
	if p.MaxDist != 0 {
		raw["max_dist"] = p.MaxDist
	}
	if _, err := check("truncated-gumbel", eps, raw); err != nil {
		return nil, err
	}
	n := space.Emb.Len()
	if n < 3 {
		return nil, fmt.Errorf("truncated-gumbel: %d words: the Poisson mean ln(|W| − 1) needs at least 3", n)
	}
	m := &Gumbel{eps: eps, space: space, minD: p.MinDist, maxD: p.MaxDist, mean: math.Log(float64(n - 1))}
	if m.minD == 0 || m.maxD == 0 {
		lo, hi := math.Inf(1), 0.0
		for y := 1; y < n; y++ {
			if d := euclid(space, 0, y); d > 0 {
				lo, hi = min(lo, d), max(hi, d)
			}
		}
		if math.IsInf(lo, 1) {
			return nil, fmt.Errorf("truncated-gumbel: every vector equals the first word's: no distance to calibrate on")
		}
		if m.minD == 0 {
			m.minD = lo
		}
		if m.maxD == 0 {
			m.maxD = hi
		}
	}
	if m.minD > m.maxD {
		return nil, fmt.Errorf("truncated-gumbel: min_dist %g exceeds max_dist %g", m.minD, m.maxD)
	}
	var err error
	if m.scale, err = gumbelScale(eps, n, m.minD, m.maxD); err != nil {
		return nil, err
	}
	return m, nil
}

// gumbelScale is the truncated Gumbel mechanism's noise scale b at ε over
// n words with smallest and largest distances minD and maxD (see Gumbel);
// an error where the calibration gives no positive scale.
func gumbelScale(eps float64, n int, minD, maxD float64) (float64, error) {
	c := 2 * (1 + math.Log(float64(n)))
	a := (eps - c/minD) / 3
	if a*minD <= 1 {
		return 0, fmt.Errorf("truncated-gumbel: ε %g is below the calibration's range for these vectors: a·Δmin = %.4g must exceed 1, that is ε > %.6g (|W| = %d, Δmin = %.4g)", eps, a*minD, (c+3)/minD, n, minD)
	}
	return 2 * maxD / min(lambertW0(2*a*maxD), math.Log(a*minD)), nil
}

// lambertW0 is the principal branch of the Lambert W function for x ≥ 0:
// the w ≥ 0 with w·e^w = x (Halley's iteration).
func lambertW0(x float64) float64 {
	if x == 0 {
		return 0
	}
	w := math.Log1p(x)
	if x > 3 {
		w -= math.Log(w)
	}
	for range 64 {
		ew := math.Exp(w)
		f := w*ew - x
		next := w - f/(ew*(w+1)-(w+2)*f/(2*w+2))
		if math.Abs(next-w) <= 1e-15*(1+math.Abs(next)) {
			return next
		}
		w = next
	}
	return w
}

func (m *Gumbel) Name() string        { return "truncated-gumbel" }
func (m *Gumbel) Notion() spec.Notion { return spec.NoDP }
func (m *Gumbel) Epsilon() float64    { return m.eps }

// Scale returns the noise scale b and the distances Δmin and Δmax it was
// calibrated on.
func (m *Gumbel) Scale() (b, minDist, maxDist float64) { return m.scale, m.minD, m.maxD }

// Bound is ε·‖φ(x) − φ(x′)‖, the metric DP the mechanism is offered
// with and does not keep (see Gumbel).
func (m *Gumbel) Bound(x, x2 int) float64 { return m.eps * euclid(m.space, x, x2) }

// gumbelToken is one token's draws: its k and the row it came from.
type gumbelToken struct {
	doc, pos, row, k int
}

func (m *Gumbel) Privatize(ctx context.Context, docs [][]string, src Source) ([][]string, metrics.Privatization, error) {
	rep := newReport(m, m.space)
	base := src.base()
	out := cloneDocs(docs)
	var toks []gumbelToken
	most := map[int]int{} // row → the largest k any of its tokens drew
	if err := eachWord(ctx, docs, nil, m.space, &rep, nil, func(di, pi, w int) {
		k := m.poisson(tokenRand(base, di, pi))
		toks = append(toks, gumbelToken{di, pi, w, k})
		most[w] = max(most[w], k)
	}); err != nil {
		return nil, rep, err
	}
	nbrs, err := m.neighbours(ctx, most)
	if err != nil {
		return nil, rep, err
	}
	bar := progress.New(m.progress, int64(len(toks)), "privatize", false)
	defer bar.Finish()
	for i, t := range toks {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, rep, err
			}
			bar.Add(int64(min(1024, len(toks)-i)))
		}
		y := m.pick(tokenRand(base, t.doc, t.pos), t.row, nbrs[t.row])
		if y == t.row {
			rep.Unchanged++
		}
		out[t.doc][t.pos] = m.space.Emb.Words[y]
	}
	return out, rep, nil
}

// poisson draws k: Poisson of mean ln(|W| − 1) by inversion, redrawn
// while above |W| − 1 (the truncation binds only on tiny vocabularies).
// It takes the token stream's first value(s); pick draws it again from
// a fresh copy of the stream and the noise after it.
func (m *Gumbel) poisson(r *rand.Rand) int {
	limit := m.space.Emb.Len() - 1
	for {
		u, p := r.Float64(), math.Exp(-m.mean)
		k, cdf := 0, p
		for u > cdf && p > 0 {
			k++
			p *= m.mean / float64(k)
			cdf += p
		}
		if k <= limit {
			return k
		}
	}
}

// neighbourRow is one input word's nearest words and their distances.
type neighbourRow struct {
	ids  []int32
	dist []float64
}

// neighbours searches each row's k nearest words for the largest k its
// tokens drew (one batched exact search per distinct k).
func (m *Gumbel) neighbours(ctx context.Context, most map[int]int) (map[int]neighbourRow, error) {
	byK := map[int][]int{}
	for w, k := range most {
		if k > 0 {
			byK[k] = append(byK[k], w)
		}
	}
	out := make(map[int]neighbourRow, len(most))
	dim := m.space.Emb.Dim
	for k, rows := range byK {
		const block = 1024
		for lo := 0; lo < len(rows); lo += block {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			hi := min(len(rows), lo+block)
			q := make([]float32, 0, (hi-lo)*dim)
			for _, w := range rows[lo:hi] {
				q = append(q, m.space.Emb.Vector(w)...)
			}
			ids, _, err := m.space.Index.Search(q, k)
			if err != nil {
				return nil, fmt.Errorf("truncated-gumbel: %w", err)
			}
			for j, w := range rows[lo:hi] {
				nr := neighbourRow{ids: ids[j*k : (j+1)*k], dist: make([]float64, k)}
				for i, y := range nr.ids {
					nr.dist[i] = euclid(m.space, w, int(y))
				}
				out[w] = nr
			}
		}
	}
	return out, nil
}

// pick privatizes one token of row w from its stream r: k (poisson, the
// very draw Privatize made to size the search), then the smallest of the
// k nearest distances plus truncated Gumbel noise (ties: the nearer in
// the search's order); w itself when k = 0.
func (m *Gumbel) pick(r *rand.Rand, w int, nr neighbourRow) int {
	k := m.poisson(r)
	// Inverse CDF of Gumbel(0, b), F(g) = exp(−e^{−g/b}), on [−Δmax, Δmax].
	flo, fhi := math.Exp(-math.Exp(m.maxD/m.scale)), math.Exp(-math.Exp(-m.maxD/m.scale))
	best, bestD := w, math.Inf(1)
	for i := range k {
		u := flo + r.Float64()*(fhi-flo)
		g := -m.scale * math.Log(-math.Log(u))
		g = min(max(g, -m.maxD), m.maxD)
		if d := nr.dist[i] + g; d < bestD {
			best, bestD = int(nr.ids[i]), d
		}
	}
	return best
}

// LogProbCeiling is an exact upper bound on ln Pr[M(x) = y]: y ≠ x is
// output only when the draw k exceeds y's rank r in x's nearest list (x's
// distances sorted, ties by the lower row, as the search orders them), so
// Pr[M(x) = y] ≤ Pr[k > r]; and y never beats the list's first word when
// its distance exceeds that word's by more than 2Δmax (−Inf). The sampled
// privacy audit reads it where a draw count would only bound the
// probability by the number of draws.
func (m *Gumbel) LogProbCeiling(x, y int) float64 {
	m.mu.Lock()
	order, ok := m.ranked[x]
	if !ok {
		n := m.space.Emb.Len()
		order = make([]rankedRow, n)
		for u := range n {
			order[u] = rankedRow{euclid(m.space, x, u), int32(u)}
		}
		slices.SortFunc(order, func(a, b rankedRow) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.row, b.row)) })
		if m.ranked == nil {
			m.ranked = map[int][]rankedRow{}
		}
		m.ranked[x] = order
	}
	m.mu.Unlock()
	if x == y {
		return 0 // k = 0 returns x: no bound below 1
	}
	d := euclid(m.space, x, y)
	if d-order[0].d > 2*m.maxD {
		return math.Inf(-1)
	}
	r, _ := slices.BinarySearchFunc(order, rankedRow{d, int32(y)}, func(a, b rankedRow) int {
		return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.row, b.row))
	})
	return m.logTail(r + 1)
}

// rankedRow is a word and its distance from the word being ranked.
type rankedRow struct {
	d   float64
	row int32
}

// logTail is ln Pr[k ≥ j] for k Poisson of mean ln(|W| − 1) truncated to
// at most |W| − 1, summed in log space from the terms that matter.
func (m *Gumbel) logTail(j int) float64 {
	limit := m.space.Emb.Len() - 1
	if j <= 0 {
		return 0
	}
	if j > limit {
		return math.Inf(-1)
	}
	logPMF := func(k int) float64 {
		lg, _ := math.Lgamma(float64(k + 1))
		return -m.mean + float64(k)*math.Log(m.mean) - lg
	}
	sum := func(from, to int) float64 { // ln Σ_{k=from}^{to} pmf(k)
		top := math.Inf(-1)
		for k := from; k <= to; k++ { // the largest term: at the mode ⌊mean⌋ or the interval's end
			if v := logPMF(k); v > top {
				top = v
			} else if float64(k) > m.mean {
				break
			}
		}
		var s float64
		for k := from; k <= to; k++ {
			t := math.Exp(logPMF(k) - top)
			s += t
			if float64(k) > m.mean && t < 1e-18*s {
				break
			}
		}
		return top + math.Log(s)
	}
	return sum(j, limit) - sum(0, limit)
}

// gumbelKind registers the truncated Gumbel mechanism (kind).
var gumbelKind = kind{name: "truncated-gumbel",
	build: func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		return NewGumbel(s, eps, GumbelParams{MinDist: v.Float("min_dist"), MaxDist: v.Float("max_dist")})
	}}

func (m *Gumbel) setProgress(w io.Writer) { m.progress = w }
