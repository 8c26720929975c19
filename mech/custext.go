package mech

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/mech/knn"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// CusText is the customized text sanitization mechanism of Chen, Mo,
// Chen, Cui and Nie (ACL Findings 2023). Every input word x of the task
// vocabulary X is given an output set f_map(x) of K candidate words that
// contains x; the output is drawn from f_map(x) with
// Pr[y | x] = exp(ε·u(x,y)/2) / Σ_{y′} exp(ε·u(x,y′)/2), u ∈ [0, 1]
// (sensitivity 1), which is pure ε-DP among the inputs that share an
// output set. Probabilities are exact (computed once per input word).
type CusText struct {
	eps     float64
	p       CusTextParams
	space   *Space
	mapping *Mapping
	probs   map[int32][]float64 // input row → probabilities over its set
	stop    map[string]bool
}

// CusTextParams configure CusText.
type CusTextParams struct {
	K        int    // output-set size
	Mapping  string // aggressive, balanced (default) or conservative
	Score    string // euclidean (default) or cosine
	Strategy string // token (default), record or dataset
	// KeepStopwords is CusText+: NLTK's English stopwords are kept.
	KeepStopwords bool
}

// raw is the parameters as the descriptor names them; empty strings take
// the defaults.
func (p CusTextParams) raw() map[string]any {
	raw := map[string]any{"k": p.K}
	for k, v := range map[string]string{"mapping": p.Mapping, "score": p.Score, "strategy": p.Strategy} {
		if v != "" {
			raw[k] = v
		}
	}
	return raw
}

// Mapping is f_map: the output set of each input row.
type Mapping struct {
	Sets  [][]int32       // distinct output sets, rows in increasing distance from the row that built them
	Of    map[int32]int32 // input row → index into Sets
	Order []int32         // input rows in the order they were mapped
}

// NewCusText builds the mapping for the task words counts (X: the words
// of the task data that have a vector) over space at ε.
func NewCusText(space *Space, eps float64, p CusTextParams, counts map[string]int64) (*CusText, error) {
	name := "custext"
	if p.KeepStopwords {
		name = "custext+"
	}
	v, err := check(name, eps, p.raw())
	if err != nil {
		return nil, err
	}
	p.Mapping, p.Score, p.Strategy = v.String("mapping"), v.String("score"), v.String("strategy")
	if p.K > space.Emb.Len() {
		return nil, fmt.Errorf("%s: K = %d, but the vocabulary has %d words", name, p.K, space.Emb.Len())
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("%s: needs the task's word counts (its input vocabulary)", name)
	}
	m := &CusText{eps: eps, p: p, space: space, stop: map[string]bool{}}
	if p.KeepStopwords {
		for _, w := range Stopwords {
			m.stop[w] = true
		}
	}
	// X in decreasing task frequency, ties by row.
	var xs []int32
	for w, c := range counts {
		if i, ok := space.Emb.Index(w); ok && c > 0 && !m.stop[w] {
			xs = append(xs, int32(i))
		}
	}
	slices.SortFunc(xs, func(a, b int32) int {
		if c := cmp.Compare(counts[space.Emb.Words[b]], counts[space.Emb.Words[a]]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	m.mapping = &Mapping{}
	err = space.cached(space.cacheKey("custext-map", xs, p.K, p.Mapping, p.Score), m.mapping, func() error {
		mp, err := BuildMapping(space, xs, p.K, p.Mapping, p.Score == "cosine")
		if err == nil {
			*m.mapping = *mp
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	m.probs = make(map[int32][]float64, len(xs))
	for _, x := range xs {
		m.probs[x] = m.scoreProbs(x, m.mapping.Sets[m.mapping.Of[x]])
	}
	return m, nil
}

// BuildMapping computes f_map for the input rows xs (in that order) with
// output sets of size k (Algorithm 1 of the paper):
//
//   - aggressive: each x gets its own k nearest candidates;
//   - balanced: an x without a set takes its k nearest candidates; that
//     set becomes the output set of every member that has none yet (as in
//     the authors' code, sai4july/CusText, an x that already has a set
//     does not build another);
//   - conservative: as balanced, and a chosen set's words leave the
//     candidates, so sets are disjoint.
//
// Nearness is Euclidean, or cosine when cosine is set. x is always in its
// own set: if ties (duplicate vectors) push it out of its k nearest, it
// replaces the last one.
func BuildMapping(space *Space, xs []int32, k int, mode string, cosine bool) (*Mapping, error) {
	ix := space.Index
	if cosine {
		var err error
		if ix, err = unitIndex(space); err != nil {
			return nil, err
		}
		defer ix.Close()
	}
	mp := &Mapping{Of: make(map[int32]int32, len(xs)), Order: xs}
	removed := make([]bool, space.Emb.Len())
	nRemoved := 0
	dim := space.Emb.Dim
	const block = 256
	for lo := 0; lo < len(xs); lo += block {
		blk := xs[lo:min(len(xs), lo+block)]
		// Speculative batched search; conservative filtering needs more.
		// (conservative: enough that k survive every removal so far and
		// the at most k·len(blk) removals this block can add).
		kk := k
		if mode == "conservative" {
			kk = min(space.Emb.Len(), k+nRemoved+k*len(blk))
		}
		q := make([]float32, 0, len(blk)*dim)
		for _, x := range blk {
			q = append(q, ix.Row(int(x))...)
		}
		ids, _, err := ix.Search(q, kk)
		if err != nil {
			return nil, err
		}
		for j, x := range blk {
			if _, done := mp.Of[x]; done && mode != "aggressive" {
				continue
			}
			var set []int32
			for _, id := range ids[j*kk : (j+1)*kk] {
				if !removed[id] {
					set = append(set, id)
					if len(set) == k {
						break
					}
				}
			}
			if len(set) < k { // the speculative search was too short
				set = exactRemaining(ix, x, k, removed)
			}
			if !slices.Contains(set, x) {
				set[len(set)-1] = x
			}
			si := int32(len(mp.Sets))
			mp.Sets = append(mp.Sets, set)
			switch mode {
			case "aggressive":
				mp.Of[x] = si
			default:
				for _, y := range set {
					if _, has := mp.Of[y]; !has {
						mp.Of[y] = si
					}
				}
				mp.Of[x] = si
				if mode == "conservative" {
					for _, y := range set {
						if !removed[y] {
							removed[y] = true
							nRemoved++
						}
					}
				}
			}
		}
	}
	return mp, nil
}

// exactRemaining is the k nearest of row x among rows not removed, by an
// exact scan (conservative mapping, when the speculative search ran short).
func exactRemaining(ix *knn.Index, x int32, k int, removed []bool) []int32 {
	type cd struct {
		i int32
		d float64
	}
	q := ix.Row(int(x))
	var all []cd
	for i := 0; i < ix.Len(); i++ {
		if removed[i] {
			continue
		}
		var s float64
		for j, v := range ix.Row(i) {
			d := float64(v) - float64(q[j])
			s += d * d
		}
		all = append(all, cd{int32(i), s})
	}
	slices.SortFunc(all, func(a, b cd) int {
		if c := cmp.Compare(a.d, b.d); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	out := make([]int32, 0, k)
	for _, c := range all[:min(k, len(all))] {
		out = append(out, c.i)
	}
	return out
}

// unitIndex indexes the unit-normalised vectors: Euclidean order on unit
// vectors is cosine order.
func unitIndex(space *Space) (*knn.Index, error) {
	dim := space.Emb.Dim
	u := make([]float32, len(space.Emb.Data))
	for i := 0; i < space.Emb.Len(); i++ {
		v := space.Emb.Vector(i)
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		n = math.Sqrt(n)
		if n == 0 {
			n = 1
		}
		for j, x := range v {
			u[i*dim+j] = float32(float64(x) / n)
		}
	}
	return knn.New(u, space.Emb.Len(), dim, gotch.CPU, knn.Options{})
}

// scoreProbs returns Pr[y | x] over set: Euclidean u = 1 − (d − min d)/(max d − min d),
// cosine u = (c − min c)/(max c − min c); all u = 1 when the set's scores are equal.
func (m *CusText) scoreProbs(x int32, set []int32) []float64 {
	xv := m.space.Emb.Vector(int(x))
	s := make([]float64, len(set))
	for i, y := range set {
		yv := m.space.Emb.Vector(int(y))
		if m.p.Score == "cosine" {
			var dot, nx, ny float64
			for j := range xv {
				dot += float64(xv[j]) * float64(yv[j])
				nx += float64(xv[j]) * float64(xv[j])
				ny += float64(yv[j]) * float64(yv[j])
			}
			s[i] = dot / math.Sqrt(nx*ny)
		} else {
			var d float64
			for j := range xv {
				t := float64(xv[j]) - float64(yv[j])
				d += t * t
			}
			s[i] = -math.Sqrt(d) // higher is better for both
		}
	}
	lo, hi := slices.Min(s), slices.Max(s)
	p := make([]float64, len(s))
	var sum float64
	for i, v := range s {
		u := 1.0
		if hi > lo {
			u = (v - lo) / (hi - lo)
		}
		p[i] = math.Exp(m.eps * u / 2)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// Probabilities returns x's output set and exact output probabilities.
func (m *CusText) Probabilities(word string) ([]string, []float64, bool) {
	i, ok := m.space.Emb.Index(word)
	if !ok {
		return nil, nil, false
	}
	p, ok := m.probs[int32(i)]
	if !ok {
		return nil, nil, false
	}
	set := m.mapping.Sets[m.mapping.Of[int32(i)]]
	words := make([]string, len(set))
	for j, y := range set {
		words[j] = m.space.Emb.Words[y]
	}
	return words, p, true
}

// Mapping returns f_map.
func (m *CusText) Mapping() *Mapping { return m.mapping }

func (m *CusText) Name() string {
	n := "custext"
	if m.p.KeepStopwords {
		n += "+"
	}
	return n + "(K=" + strconv.Itoa(m.p.K) + "," + m.p.Mapping + "," + m.p.Score + "," + m.p.Strategy + ")"
}

func (m *CusText) Notion() spec.Notion { return spec.SetDP }
func (m *CusText) Epsilon() float64    { return m.eps }

func (m *CusText) Privatize(ctx context.Context, docs [][]string, src Source) ([][]string, metrics.Privatization, error) {
	rep := newReport(m, m.space)
	rep.Candidates += fmt.Sprintf("; %d output sets for %d input words", len(m.mapping.Sets), len(m.mapping.Of))
	base := src.base()
	datasetChoice := map[int32]int32{}
	out := make([][]string, len(docs))
	for di, d := range docs {
		if di&255 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, rep, err
			}
		}
		out[di] = append([]string(nil), d...)
		recordChoice := map[int32]int32{}
		for pi, tok := range d {
			rep.Tokens++
			if m.stop[tok] {
				rep.Stopwords++ // CusText+: kept by rule, whether or not it has a vector
				continue
			}
			i, ok := m.space.Emb.Index(tok)
			p, mapped := m.probs[int32(i)]
			if !ok || !mapped {
				rep.OOV++
				continue
			}
			x := int32(i)
			var y int32
			switch m.p.Strategy {
			case "record":
				if c, seen := recordChoice[x]; seen {
					y = c
				} else {
					y = m.draw(tokenRand(base, di, pi), x, p)
					recordChoice[x] = y
				}
			case "dataset":
				if c, seen := datasetChoice[x]; seen {
					y = c
				} else {
					y = m.draw(src.Word("dataset", tok), x, p)
					datasetChoice[x] = y
				}
			default:
				y = m.draw(tokenRand(base, di, pi), x, p)
			}
			if y == x {
				rep.Unchanged++
			}
			out[di][pi] = m.space.Emb.Words[y]
		}
	}
	return out, rep, nil
}

func (m *CusText) draw(r *rand.Rand, x int32, p []float64) int32 {
	set := m.mapping.Sets[m.mapping.Of[x]]
	u := r.Float64()
	for j, q := range p {
		if u < q {
			return set[j]
		}
		u -= q
	}
	return set[len(set)-1]
}

// Shared reports whether input row x is of CusText's "N–M" type (Chen et
// al. 2023, Table 4): its output set is the output set of at least one
// other input word too (N ≥ 2 inputs share M outputs), so an output does
// not single out x's set as x's alone. Not N–M ("1–M") is a set only x
// maps to: what the aggressive mapping gives almost every word, the
// balanced one rarely (a set whose other members all had one already), the
// conservative one never (disjoint sets, every member assigned). This
// reading reproduces the three published orders of magnitude; the
// stricter one — every input member of the set maps to it — does not
// separate balanced from aggressive. It is false for rows that are not
// inputs.
func (m *Mapping) Shared(x int32) bool {
	si, ok := m.Of[x]
	if !ok {
		return false
	}
	for _, y := range m.Sets[si] {
		if sj, in := m.Of[y]; in && y != x && sj == si {
			return true
		}
	}
	return false
}
