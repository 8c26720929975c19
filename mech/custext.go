package mech

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
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
	// Removed is what the conservative mapping does with a chosen set's
	// words: zero (they stay as zero vectors; cosine only) or drop; ""
	// takes the authors' choice for the score (zero with cosine).
	Removed string
	// KeepStopwords is CusText+: NLTK's English stopwords are kept.
	KeepStopwords bool
}

// raw is the parameters as the descriptor names them; empty strings take
// the defaults.
func (p CusTextParams) raw() map[string]any {
	raw := map[string]any{"k": p.K}
	for k, v := range map[string]string{"mapping": p.Mapping, "score": p.Score, "strategy": p.Strategy, "removed": p.Removed} {
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
	// Zeroed marks, per set, the members taken as zero vectors (the
	// conservative mapping with removed: zero): they score cosine 0 with
	// every input of the set. Empty when there are none.
	Zeroed [][]bool
}

// ZeroAt reports whether member j of set si was taken as a zero vector.
func (m *Mapping) ZeroAt(si int32, j int) bool {
	return int(si) < len(m.Zeroed) && len(m.Zeroed[si]) > j && m.Zeroed[si][j]
}

// NewCusText builds the mapping for the task words counts (X: the words
// of the task data that have a vector) over space at ε.
func NewCusText(space *Space, eps float64, p CusTextParams, counts map[string]int64) (*CusText, error) {
	name := p.name()
	p, err := p.resolve(eps)
	if err != nil {
		return nil, err
	}
	if p.K > space.Emb.Len() {
		return nil, fmt.Errorf("%s: K = %d, but the vocabulary has %d words", name, p.K, space.Emb.Len())
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("%s: needs the task's word counts (its input vocabulary)", name)
	}
	m := &CusText{eps: eps, p: p, space: space, stop: p.stopwords()}
	xs := custextInputs(space, counts, m.stop)
	m.mapping, err = space.mapping(mappingKey(space, xs, p), func() (*Mapping, error) { return buildMapping(space, xs, p) })
	if err != nil {
		return nil, err
	}
	scores := space.memberScores(m.mapping, p.Score) // xs are the mapping's inputs (its Order; its key holds them)
	m.probs = make(map[int32][]float64, len(xs))
	for _, x := range xs {
		m.probs[x] = m.scoreProbs(scores[x])
	}
	return m, nil
}

func (p CusTextParams) name() string {
	if p.KeepStopwords {
		return "custext+"
	}
	return "custext"
}

// resolve completes p by the descriptor's defaults (and the authors'
// treatment of removed words) or refuses it.
func (p CusTextParams) resolve(eps float64) (CusTextParams, error) {
	v, err := check(p.name(), eps, p.raw())
	if err != nil {
		return p, err
	}
	p.Mapping, p.Score, p.Strategy, p.Removed = v.String("mapping"), v.String("score"), v.String("strategy"), v.String("removed")
	if p.Removed == "" { // the authors': zeroed with cosine, 1e9 (dropped) with Euclidean
		p.Removed = "drop"
		if p.Score == "cosine" {
			p.Removed = "zero"
		}
	}
	return p, nil
}

// stopwords are the words CusText+ keeps as they are (none for CusText).
func (p CusTextParams) stopwords() map[string]bool {
	stop := map[string]bool{}
	if p.KeepStopwords {
		for _, w := range Stopwords {
			stop[w] = true
		}
	}
	return stop
}

// custextInputs is X, the task's words with a vector (less the kept
// stopwords), in decreasing task frequency, ties by row.
func custextInputs(space *Space, counts map[string]int64, stop map[string]bool) []int32 {
	var xs []int32
	for w, c := range counts {
		if i, ok := space.Emb.Index(w); ok && c > 0 && !stop[w] {
			xs = append(xs, int32(i))
		}
	}
	slices.SortFunc(xs, func(a, b int32) int {
		if c := cmp.Compare(counts[space.Emb.Words[b]], counts[space.Emb.Words[a]]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return xs
}

// mappingKey names a mapping in the space's cache: the inputs in order
// and what builds the sets (the removal only for the conservative
// mapping, so that the others' cached mappings stay valid).
func mappingKey(space *Space, xs []int32, p CusTextParams) string {
	if p.Mapping == "conservative" {
		return space.cacheKey("custext-map", xs, p.K, p.Mapping, p.Score, p.Removed)
	}
	return space.cacheKey("custext-map", xs, p.K, p.Mapping, p.Score)
}

// buildMapping computes f_map for the input rows xs (in that order) with
// output sets of size p.K (Algorithm 1 of the paper; p resolved):
//
//   - aggressive: each x gets its own K nearest candidates;
//   - balanced: an x without a set takes its K nearest candidates; that
//     set becomes the output set of every member that has none yet (as in
//     the authors' code, sai4july/CusText, an x that already has a set
//     does not build another);
//   - conservative: as balanced, and a chosen set's words leave the
//     search. With p.Removed "zero" (the authors' code with cosine) they
//     stay in it as zero vectors, of cosine 0 with every word: a set is
//     the remaining words of positive cosine, nearest first, then — when
//     fewer than K have one — removed words at cosine 0 (lowest row
//     first; the same rank as a remaining word of cosine exactly 0, ties
//     by row), then remaining words of negative cosine. Such members are
//     marked in Mapping.Zeroed: their score is cosine 0. With "drop" they
//     leave the candidates.
//
// Nearness is Euclidean, or cosine when p.Score is "cosine" (Euclidean on
// unit vectors, where cosine 0 is squared distance 2). x is always in its
// own set: if ties (duplicate vectors) push it out of its K nearest, it
// replaces the last one.
//
// Queries run in blocks through the exact search; the conservative
// mapping searches each block without the words removed before it, and a
// query whose block-mates took its candidates is searched again alone.
func buildMapping(space *Space, xs []int32, p CusTextParams) (*Mapping, error) {
	ix := space.Index
	cosine := p.Score == "cosine"
	if cosine {
		var err error
		if ix, err = unitIndex(space); err != nil {
			return nil, err
		}
		defer ix.Close()
	}
	k, mode := p.K, p.Mapping
	zero := mode == "conservative" && p.Removed == "zero" // spec refuses zero without cosine
	n, dim := ix.Len(), ix.Dim()
	mp := &Mapping{Of: make(map[int32]int32, len(xs)), Order: xs}
	removed := make([]bool, n)
	nRemoved := 0
	const block = 256
	// alone is x's exact search over the rows not removed now: its k
	// nearest of them, or every one left.
	alone := func(x int32, k int) ([]int32, []float64, error) {
		if k = min(k, n-nRemoved); k == 0 {
			return nil, nil, nil
		}
		return ix.SearchExcept(ix.Row(int(x)), k, removed)
	}
	for lo := 0; lo < len(xs); {
		var blk []int32 // the next queries that build a set
		for ; lo < len(xs) && len(blk) < block; lo++ {
			if _, done := mp.Of[xs[lo]]; !done || mode == "aggressive" {
				blk = append(blk, xs[lo])
			}
		}
		if len(blk) == 0 {
			break
		}
		kk := min(k, n)
		var except []bool
		if mode == "conservative" {
			// room for block-mates' removals; a query left short is
			// searched again alone.
			kk = min(n-nRemoved, 2*k+8)
			except = slices.Clone(removed)
		}
		q := make([]float32, 0, len(blk)*dim)
		for _, x := range blk {
			q = append(q, ix.Row(int(x))...)
		}
		var ids []int32
		var dist []float64
		if kk > 0 {
			var err error
			if ids, dist, err = ix.SearchExcept(q, kk, except); err != nil {
				return nil, err
			}
		}
		for j, x := range blk {
			if _, done := mp.Of[x]; done && mode != "aggressive" {
				continue
			}
			var set []int32
			var zeroed []bool
			switch {
			case zero:
				var err error
				if set, zeroed, err = zeroSet(x, k, ids[j*kk:(j+1)*kk], dist[j*kk:(j+1)*kk], removed, alone); err != nil {
					return nil, err
				}
			default:
				for _, id := range ids[j*kk : (j+1)*kk] {
					if !removed[id] {
						set = append(set, id)
						if len(set) == k {
							break
						}
					}
				}
				if len(set) < k && len(set) < n-nRemoved { // block-mates took candidates
					var err error
					if set, _, err = alone(x, k); err != nil {
						return nil, err
					}
				}
			}
			if !slices.Contains(set, x) {
				if len(set) < k {
					set = append(set, x)
					if zeroed != nil {
						zeroed = append(zeroed, false)
					}
				} else {
					set[len(set)-1] = x
					if zeroed != nil {
						zeroed[len(set)-1] = false
					}
				}
			}
			si := int32(len(mp.Sets))
			mp.Sets = append(mp.Sets, set)
			if zero {
				mp.Zeroed = append(mp.Zeroed, zeroed)
			}
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

// zeroSet is x's conservative set when removed words stay as zero
// vectors (see buildMapping): ids and dist are x's nearest rows among
// those not removed when its block was searched, alone its exact search
// over the rows not removed now. On unit vectors cosine 0 is distance √2
// (math.Sqrt2 compared with the search's distances). zeroed marks the
// members taken at cosine 0 (nil when none).
func zeroSet(x int32, k int, ids []int32, dist []float64, removed []bool,
	alone func(int32, int) ([]int32, []float64, error)) (set []int32, zeroed []bool, err error) {
	// k remaining words of positive cosine from the block's search: the
	// nearest of the rows left now, ahead of every removed row.
	for j, id := range ids {
		if !(dist[j] < math.Sqrt2) {
			break
		}
		if !removed[id] {
			set = append(set, id)
			if len(set) == k {
				return set, nil, nil
			}
		}
	}
	// Otherwise merge the rows left now (exactly, nearest first) with the
	// removed rows at √2, by (distance, row).
	rest, rd, err := alone(x, k)
	if err != nil {
		return nil, nil, err
	}
	set = set[:0]
	r := 0 // the next removed row
	for len(set) < k {
		for r < len(removed) && !removed[r] {
			r++
		}
		haveRest, haveRemoved := len(rest) > 0, r < len(removed)
		if !haveRest && !haveRemoved {
			break
		}
		if haveRest && (!haveRemoved || rd[0] < math.Sqrt2 || rd[0] == math.Sqrt2 && rest[0] < int32(r)) {
			set, zeroed = append(set, rest[0]), append(zeroed, false)
			rest, rd = rest[1:], rd[1:]
		} else {
			set, zeroed = append(set, int32(r)), append(zeroed, true)
			r++
		}
	}
	if !slices.Contains(zeroed, true) {
		zeroed = nil
	}
	return set, zeroed, nil
}

// Cosine is the cosine of a and b in float64; 0 when either is the zero
// vector (as the authors' code scores a zeroed word).
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i, v := range a {
		dot += float64(v) * float64(b[i])
		na += float64(v) * float64(v)
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
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

// setScores returns the scores of x with the members of set si, in the
// set's order: cosine (score "cosine") or −Euclidean distance (higher is
// better for both), 0 for a member taken as a zero vector. ε plays no
// part: a space keeps them per mapping (memberScores).
func setScores(space *Space, mp *Mapping, x, si int32, score string) []float64 {
	set := mp.Sets[si]
	xv := space.Emb.Vector(int(x))
	s := make([]float64, len(set))
	for i, y := range set {
		yv := space.Emb.Vector(int(y))
		if mp.ZeroAt(si, i) {
			s[i] = 0
		} else if score == "cosine" {
			s[i] = Cosine(xv, yv)
		} else {
			var d float64
			for j := range xv {
				t := float64(xv[j]) - float64(yv[j])
				d += t * t
			}
			s[i] = -math.Sqrt(d)
		}
	}
	return s
}

// scoreProbs returns Pr[y | x] over x's set from its members' scores s
// (setScores): Euclidean u = 1 − (d − min d)/(max d − min d),
// cosine u = (c − min c)/(max c − min c), c = 0 for a member taken as a
// zero vector; all u = 1 when the set's scores are equal.
func (m *CusText) scoreProbs(s []float64) []float64 {
	lo, hi := slices.Min(s), slices.Max(s)
	p := make([]float64, len(s))
	var sum float64
	// exp(ε·u/2) overflows once ε/2 passes ln(MaxFloat64) ≈ 709.8: beyond
	// that the scores are shifted by the largest u (1), which leaves the
	// distribution unchanged; below it they are not, so every distribution
	// xp ever drew from is bit for bit the same.
	shift := 0.0
	if m.eps/2 > 700 {
		shift = 1
	}
	for i, v := range s {
		u := 1.0
		if hi > lo {
			u = (v - lo) / (hi - lo)
		}
		p[i] = math.Exp(m.eps * (u - shift) / 2)
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
	if m.p.Mapping == "conservative" {
		n += "(K=" + strconv.Itoa(m.p.K) + "," + m.p.Mapping + " removed=" + m.p.Removed + "," + m.p.Score + "," + m.p.Strategy + ")"
		return n
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
	var recordChoice map[int32]int32 // the current record's draws (strategy record)
	record := -1
	out := cloneDocs(docs)
	err := eachWord(ctx, docs, m.stop, m.space, &rep, nil, func(di, pi, i int) {
		p, mapped := m.probs[int32(i)]
		if !mapped {
			rep.OOV++ // a word with a vector but outside the mapping's inputs
			return
		}
		if di != record {
			record, recordChoice = di, map[int32]int32{}
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
			tok := docs[di][pi]
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
	})
	if err != nil {
		return nil, rep, err
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

// custextKind and custextPlusKind register CusText and CusText+ (kind):
// their mapping is the costly structure the cache keeps.
var (
	custextKind     = kind{name: "custext", exact: true, build: custextBuilder(false), cached: custextCached(false)}
	custextPlusKind = kind{name: "custext+", exact: true, build: custextBuilder(true), cached: custextCached(true)}
)

func custextBuilder(plus bool) func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
	return func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		return NewCusText(s, eps, custextParams(v, plus), o.Counts)
	}
}

func custextParams(v spec.Values, plus bool) CusTextParams {
	return CusTextParams{K: v.Int("k"), Mapping: v.String("mapping"), Score: v.String("score"), Strategy: v.String("strategy"), Removed: v.String("removed"), KeepStopwords: plus}
}

// custextCached reports whether the mapping a CusText setting would
// build is in the space's cache.
func custextCached(plus bool) func(space *Space, v spec.Values, counts map[string]int64) bool {
	return func(space *Space, v spec.Values, counts map[string]int64) bool {
		cp, err := custextParams(v, plus).resolve(1)
		if err != nil || space.CacheDir == "" {
			return false
		}
		_, err = os.Stat(filepath.Join(space.CacheDir, mappingKey(space, custextInputs(space, counts, cp.stopwords()), cp)))
		return err == nil
	}
}

// Bound is ε between two inputs that share an output set (neither a kept
// CusText+ stopword), +Inf otherwise: CusText promises nothing between
// inputs of different sets.
func (m *CusText) Bound(x, x2 int) float64 {
	if !m.input(x) || !m.input(x2) || m.mapping.Of[int32(x)] != m.mapping.Of[int32(x2)] {
		return math.Inf(1)
	}
	return m.eps
}

// input reports whether row x is privatized: an input word (a task word
// with a vector, which has an output set), not a kept CusText+ stopword.
// A balanced or conservative set's members that are not task words have
// a set too but are never inputs.
func (m *CusText) input(x int) bool {
	_, ok := m.probs[int32(x)]
	return ok && !m.stop[m.space.Emb.Words[x]]
}

// Peers are the inputs CusText's guarantee relates to x: the input words
// mapped to x's output set (x included; none when x is not an input), in
// increasing row order.
func (m *CusText) Peers(x int) []int {
	if !m.input(x) {
		return nil
	}
	sx := m.mapping.Of[int32(x)]
	var out []int
	for r, si := range m.mapping.Of {
		if si == sx && m.input(int(r)) {
			out = append(out, int(r))
		}
	}
	slices.Sort(out)
	return out
}

// Distributions calls f with the exact output distribution of each input
// row: its output set and the exponential mechanism's probabilities over
// it. A row outside the input vocabulary (or a CusText+ stopword) is
// kept: its distribution is the row itself with probability 1.
func (m *CusText) Distributions(ctx context.Context, rows []int, f func(w int, outs []int32, p []float64) error) error {
	for i, w := range rows {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		p, mapped := m.probs[int32(w)]
		if !mapped || m.stop[m.space.Emb.Words[w]] {
			if err := f(w, []int32{int32(w)}, []float64{1}); err != nil {
				return err
			}
			continue
		}
		if err := f(w, m.mapping.Sets[m.mapping.Of[int32(w)]], p); err != nil {
			return err
		}
	}
	return nil
}
