package mech

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// Diffractor is 1-Diffractor (Meisenbacher et al., 2024; the authors'
// code sjmeis/Diffractor): the words of the vectors are laid out once on
// a line, each next to its nearest not yet placed neighbour, and a word
// is privatized by moving it along the line, by two-sided geometric
// noise on its position (method geometric: Pr[shift k] ∝ e^{−ε|k|},
// clipped to the ends) or by the truncated exponential mechanism on
// positions (method tem: Pr[j] ∝ exp(−ε·min(|i − j|, γ)/2)). Either is
// ε·d-private in the line's metric d(x, x′) = |pos(x) − pos(x′)|.
//
// The line (diffractorLine): start at the first word of the vectors;
// repeatedly step to the nearest of the current word's 50 nearest
// neighbours (itself included, exact Euclidean search, ties by the lower
// row) that is not yet on the line, or, when all 50 are, to the lowest
// row not yet on it. The authors take "any remaining word" there (a
// Python set's iteration order); xp takes the lowest row, so the line is
// a function of the vectors alone, built once per space and cached.
//
// Choices against the authors' code, which builds one line per embedding
// model (several models) and outputs a uniformly chosen one of the lines'
// outputs: xp builds one line from the config's vectors (the mixture over
// several lines keeps ε times the largest line distance; xp's is the
// one-line case). Stopwords (NLTK's 179, as CusText+) are kept unless
// replace_stopwords, as in the authors' default; a kept stopword has no
// guarantee. Both methods are sampled exactly from their closed forms
// (also used by the exact analyses: Distributions).
type Diffractor struct {
	eps      float64
	space    *Space
	method   string
	gamma    int
	stop     map[string]bool
	line     []int32 // position → row
	pos      []int32 // row → position
	progress io.Writer
}

// DiffractorParams configure 1-Diffractor.
type DiffractorParams struct {
	Method           string // geometric (default) or tem
	Gamma            int    // tem's window half-width γ in positions (5)
	ReplaceStopwords bool   // privatize NLTK's stopwords too
}

// NewDiffractor returns 1-Diffractor at ε over space's words. Building
// the line searches every word's 50 nearest neighbours (about as long as
// privatizing one token per word); progress receives a bar.
func NewDiffractor(space *Space, eps float64, p DiffractorParams, progressTo io.Writer) (*Diffractor, error) {
	raw := map[string]any{"replace_stopwords": p.ReplaceStopwords}
	if p.Method != "" {
		raw["method"] = p.Method
	}
	if p.Gamma != 0 {
		raw["gamma"] = p.Gamma
	}
	v, err := check("diffractor", eps, raw)
	if err != nil {
		return nil, err
	}
	line, err := space.diffractorLine(progressTo)
	if err != nil {
		return nil, err
	}
	m := &Diffractor{eps: eps, space: space, method: v.String("method"), gamma: v.Int("gamma"), line: line, pos: make([]int32, len(line)), progress: progressTo}
	for j, r := range line {
		m.pos[r] = int32(j)
	}
	if !p.ReplaceStopwords {
		m.stop = map[string]bool{}
		for _, w := range Stopwords {
			m.stop[w] = true
		}
	}
	return m, nil
}

// diffractorLine returns the space's line (see Diffractor), computed once
// per space and kept in its cache folder.
func (s *Space) diffractorLine(progressTo io.Writer) ([]int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.line != nil {
		return s.line, nil
	}
	var line []int32
	err := s.cached(s.cacheKey("diffractor-line", 50), &line, func() (err error) {
		line, err = diffractorLine(s, 50, progressTo)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("diffractor: %w", err)
	}
	s.line = line
	return line, nil
}

// diffractorLine lays the space's words on a line by greedy nearest
// neighbours among each word's k nearest (see Diffractor).
func diffractorLine(s *Space, k int, progressTo io.Writer) ([]int32, error) {
	n, dim := s.Emb.Len(), s.Emb.Dim
	k = min(k, n)
	nb := make([]int32, 0, n*k)
	bar := progress.New(progressTo, int64(n), "diffractor line", false)
	const block = 2048
	for lo := 0; lo < n; lo += block {
		hi := min(n, lo+block)
		ids, _, err := s.Index.Search(s.Emb.Data[lo*dim:hi*dim], k)
		if err != nil {
			bar.Finish()
			return nil, err
		}
		nb = append(nb, ids...)
		bar.Add(int64(hi - lo))
	}
	bar.Finish()
	placed := make([]bool, n)
	line := make([]int32, 0, n)
	cur, free := int32(0), 0
	for {
		line = append(line, cur)
		placed[cur] = true
		if len(line) == n {
			return line, nil
		}
		next := int32(-1)
		for _, j := range nb[int(cur)*k : int(cur+1)*k] {
			if !placed[j] {
				next = j
				break
			}
		}
		if next < 0 {
			for placed[free] {
				free++
			}
			next = int32(free)
		}
		cur = next
	}
}

func (m *Diffractor) Name() string {
	n := "diffractor(" + m.method
	if m.method == "tem" {
		n += ",gamma=" + strconv.Itoa(m.gamma)
	}
	if m.stop == nil {
		n += ",replace_stopwords"
	}
	return n + ")"
}

func (m *Diffractor) Notion() spec.Notion { return spec.LineDP }
func (m *Diffractor) Epsilon() float64    { return m.eps }

// Line returns the words' positions: line[j] is the row at position j.
func (m *Diffractor) Line() []int32 { return m.line }

// Bound is ε·|pos(x) − pos(x′)|; +Inf when either is a kept stopword.
func (m *Diffractor) Bound(x, x2 int) float64 {
	if m.kept(x) || m.kept(x2) {
		return math.Inf(1)
	}
	return m.eps * math.Abs(float64(m.pos[x]-m.pos[x2]))
}

func (m *Diffractor) kept(row int) bool { return m.stop[m.space.Emb.Words[row]] }

func (m *Diffractor) Privatize(ctx context.Context, docs [][]string, src Source) ([][]string, metrics.Privatization, error) {
	rep := newReport(m, m.space)
	base := src.base()
	bar := progress.New(m.progress, tokenCount(docs), "privatize", false)
	defer bar.Finish()
	out := cloneDocs(docs)
	err := eachWord(ctx, docs, m.stop, m.space, &rep, bar, func(di, pi, w int) {
		y := m.line[m.shift(tokenRand(base, di, pi), int(m.pos[w]))]
		if int(y) == w {
			rep.Unchanged++
		}
		out[di][pi] = m.space.Emb.Words[y]
	})
	if err != nil {
		return nil, rep, err
	}
	return out, rep, nil
}

// shift draws the output position for input position i.
func (m *Diffractor) shift(r *rand.Rand, i int) int {
	n := len(m.line)
	if m.method == "geometric" {
		// G = ⌊ln(1−U)/(−ε)⌋ is geometric on {0, 1, …} with Pr[G ≥ g] =
		// e^{−εg}; the difference of two is two-sided geometric.
		g := func() int { return int(math.Floor(math.Log(1-r.Float64()) / -m.eps)) }
		k := g()
		k -= g()
		return min(max(i+k, 0), n-1)
	}
	lo, hi := max(0, i-m.gamma), min(n-1, i+m.gamma)
	var in float64
	for j := lo; j <= hi; j++ {
		in += math.Exp(-m.eps * float64(abs(i-j)) / 2)
	}
	outside := n - (hi - lo + 1)
	u := r.Float64() * (in + float64(outside)*math.Exp(-m.eps*float64(m.gamma)/2))
	for j := lo; j <= hi; j++ {
		w := math.Exp(-m.eps * float64(abs(i-j)) / 2)
		if u < w {
			return j
		}
		u -= w
	}
	if outside == 0 {
		return hi
	}
	o := r.IntN(outside) // uniform beyond the window
	if o < lo {
		return o
	}
	return o + (hi - lo + 1)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// logProbs returns ln Pr[position i → j] as a function of j, in closed
// form: geometric, ln tanh(ε/2) − ε|i − j| inside the line and
// −ε|i − j| − ln(1 + e^{−ε}) at its ends (they take the tails); tem,
// −ε·min(|i − j|, γ)/2 − ln Z.
func (m *Diffractor) logProbs(i int) func(j int) float64 {
	n := len(m.line)
	if m.method == "geometric" {
		inner, end := math.Log(math.Tanh(m.eps/2)), -math.Log1p(math.Exp(-m.eps))
		return func(j int) float64 {
			switch {
			case n == 1:
				return 0
			case j == 0 || j == n-1:
				return -m.eps*float64(abs(i-j)) + end
			}
			return inner - m.eps*float64(abs(i-j))
		}
	}
	lo, hi := max(0, i-m.gamma), min(n-1, i+m.gamma)
	var z float64
	for k := lo; k <= hi; k++ {
		z += math.Exp(-m.eps * float64(abs(i-k)) / 2)
	}
	z += float64(n-(hi-lo+1)) * math.Exp(-m.eps*float64(m.gamma)/2)
	lz := math.Log(z)
	return func(j int) float64 { return -m.eps*float64(min(abs(i-j), m.gamma))/2 - lz }
}

// probs is the exact output distribution over positions for input
// position i.
func (m *Diffractor) probs(i int) []float64 {
	lp := m.logProbs(i)
	p := make([]float64, len(m.line))
	for j := range p {
		p[j] = math.Exp(lp(j))
	}
	return p
}

// LogProb is ln Pr[M(x) = y] in closed form, exact where the probability
// itself underflows (far positions on a long line).
func (m *Diffractor) LogProb(x, y int) float64 {
	if m.kept(x) {
		if x == y {
			return 0
		}
		return math.Inf(-1)
	}
	return m.logProbs(int(m.pos[x]))(int(m.pos[y]))
}

// Distributions calls f with each row's exact output distribution over
// the words (a kept stopword: itself with probability 1).
func (m *Diffractor) Distributions(ctx context.Context, rows []int, f func(w int, outs []int32, p []float64) error) error {
	for _, w := range rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		if m.kept(w) {
			if err := f(w, []int32{int32(w)}, []float64{1}); err != nil {
				return err
			}
			continue
		}
		if err := f(w, m.line, m.probs(int(m.pos[w]))); err != nil {
			return err
		}
	}
	return nil
}

// diffractorKind registers 1-Diffractor (kind).
var diffractorKind = kind{name: "diffractor", exact: true,
	build: func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		return NewDiffractor(s, eps, DiffractorParams{Method: v.String("method"), Gamma: v.Int("gamma"), ReplaceStopwords: v.Bool("replace_stopwords")}, o.Progress)
	}}

func (m *Diffractor) setProgress(w io.Writer) { m.progress = w }
