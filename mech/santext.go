package mech

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/torchrt"
)

// SanText is the exponential mechanism of Yue et al. (Findings of ACL
// 2021): Pr[ŵ | w] ∝ exp(−½·ε·‖φ(w) − φ(ŵ)‖) over the candidates ŵ.
// It is ε·d_χ-private with d Euclidean (for a fixed candidate set, over
// any inputs).
//
// The candidates are, as in the authors' code (run_SanText.py: the
// vocabulary is built from the task's texts, and only its words found in
// the embedding file get a row), the task vocabulary's words that have a
// vector (candidates: task, the default) — a few thousand words for
// SST-2 — or every word of the embedding (candidates: embedding). The
// same ε gives very different distributions over the two.
//
// SanText+ (same paper; definition taken from the authors' code,
// xiangyue9607/SanText, run_SanText.py and SanText.py SanText_plus): the
// task vocabulary is every word of the task's texts (all splits, with or
// without a vector), ordered by frequency; its least frequent fraction
// SensitiveFraction are the sensitive words. The output set is the
// sensitive words that have a vector; a sensitive word is always sampled,
// any other word is sampled with probability P and otherwise kept. The
// probabilities are the same softmax of −ε·d/2 restricted to the
// sensitive outputs. Only sensitive words get the metric-DP guarantee, so
// SanText+ reports no guarantee. Two choices differ from the authors'
// code and are deliberate: ⌊fraction·|V|⌋ words are sensitive (their
// slice takes one more), ties in frequency are ordered by the word (theirs
// by first occurrence), and a word without a vector is kept under xp's OOV
// policy (theirs is replaced by a uniformly drawn task word). A word with
// a vector outside the task vocabulary (never the case in xp run, whose
// counts cover every split) is treated as non-sensitive.
//
// Sampling is exact with bounded memory: for each distinct input word
// the distances to all candidates are computed in float64 (libtorch),
// turned into a cumulative distribution once and used for every
// occurrence of the word, in blocks of words sized to a memory budget,
// against one output matrix built once per privatization: never the
// reference code's dense V × V matrix.
type SanText struct {
	eps   float64
	space *Space
	plus  bool
	p     float64
	frac  float64
	// outputs are the candidate rows that may be output (all, or the
	// sensitive words for SanText+); sensitive marks input rows always
	// sampled.
	outputs   []int32
	sensitive []bool
	budget    int64
	progress  io.Writer
	// tem: the truncated exponential mechanism (tem.go), whose distances
	// are clipped at gamma.
	tem   bool
	gamma float64
}

// SanTextParams configure SanText and SanText+.
type SanTextParams struct {
	// Task is the task vocabulary (word frequencies of the task's texts):
	// when set, plain SanText's candidates are its words with a vector;
	// nil means every word of the embedding. SanText+ takes its own
	// candidates from Plus.Counts.
	Task map[string]int64
	// Plus, when set, is SanText+.
	Plus *SanTextPlus
}

// SanTextPlus configures SanText+.
type SanTextPlus struct {
	P                 float64          // probability that a non-sensitive word is sanitized (paper: 0.3)
	SensitiveFraction float64          // share of the task vocabulary deemed sensitive, least frequent first (paper: 0.9)
	Counts            map[string]int64 // word frequencies of the task data (every split)
}

// NewSanText returns SanText (p.Plus == nil) or SanText+ at ε.
func NewSanText(space *Space, eps float64, p SanTextParams, budget int64) (*SanText, error) {
	plus := p.Plus
	name, raw := "santext", map[string]any{"candidates": "embedding"}
	if p.Task != nil {
		raw["candidates"] = "task"
	}
	if plus != nil {
		name, raw = "santext+", map[string]any{"p": plus.P, "sensitive": plus.SensitiveFraction}
	}
	if _, err := check(name, eps, raw); err != nil {
		return nil, err
	}
	m := &SanText{eps: eps, space: space, budget: budget}
	if m.budget <= 0 {
		m.budget = 256 << 20
	}
	n := space.Emb.Len()
	m.sensitive = make([]bool, n)
	if plus == nil {
		for i := range m.sensitive {
			m.sensitive[i] = true
			if p.Task == nil || p.Task[space.Emb.Words[i]] > 0 {
				m.outputs = append(m.outputs, int32(i))
			}
		}
		if len(m.outputs) == 0 {
			return nil, fmt.Errorf("santext: none of the %d task words has a vector", len(p.Task))
		}
		return m, nil
	}
	if len(plus.Counts) == 0 {
		return nil, fmt.Errorf("santext+: needs the task's word counts")
	}
	m.plus, m.p, m.frac = true, plus.P, plus.SensitiveFraction
	sensitive := sensitiveWords(plus.Counts, plus.SensitiveFraction)
	for _, w := range sensitive {
		if r, ok := space.Emb.Index(w); ok {
			m.sensitive[r] = true
		}
	}
	for i := 0; i < n; i++ {
		if m.sensitive[i] {
			m.outputs = append(m.outputs, int32(i))
		}
	}
	if len(m.outputs) == 0 {
		return nil, fmt.Errorf("santext+: none of the %d sensitive task words has a vector", len(sensitive))
	}
	return m, nil
}

// sensitiveWords returns SanText+'s sensitive words: the least frequent
// ⌊fraction·|V|⌋ words of the task vocabulary V (the words counted, with
// or without a vector), frequency ties ordered by the word.
func sensitiveWords(counts map[string]int64, fraction float64) []string {
	words := make([]string, 0, len(counts))
	for w, c := range counts {
		if c > 0 {
			words = append(words, w)
		}
	}
	slices.SortFunc(words, func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b))
	})
	ns := int(fraction * float64(len(words)))
	return words[len(words)-ns:]
}

func (m *SanText) Name() string {
	if m.tem {
		return "tem(gamma=" + strconv.FormatFloat(m.gamma, 'g', 6, 64) + ")"
	}
	if m.plus {
		return "santext+(p=" + strconv.FormatFloat(m.p, 'g', -1, 64) + ",sensitive=" + strconv.FormatFloat(m.frac, 'g', -1, 64) + ")"
	}
	return "santext"
}

func (m *SanText) Notion() spec.Notion {
	if m.plus {
		return spec.NoDP
	}
	return spec.MetricDP
}

func (m *SanText) Epsilon() float64 { return m.eps }

// Sensitive reports whether input row w is always sampled (every row for
// SanText, the sensitive words for SanText+).
func (m *SanText) Sensitive(w int) bool { return m.sensitive[w] }

// Probabilities returns the exact output distribution of input row w over
// m's output rows when it is sampled (for privacy measures and tests).
func (m *SanText) Probabilities(w int) ([]int32, []float64, error) {
	var p []float64
	err := m.withOutputs(func(o *outputMatrix) error {
		d, err := o.distances(m.space, []int{w})
		if err == nil {
			p = m.weights(d[0])
		}
		return err
	})
	return m.outputs, p, err
}

// weights turns distances into normalized probabilities exp(−ε d/2)/Z
// (TEM: exp(−ε·min(d, γ)/2)/Z).
func (m *SanText) weights(d []float64) []float64 {
	p := make([]float64, len(d))
	mx := math.Inf(-1)
	for i, x := range d {
		if m.tem {
			x = math.Min(x, m.gamma)
		}
		p[i] = -0.5 * m.eps * x
		mx = math.Max(mx, p[i])
	}
	var sum float64
	for i := range p {
		p[i] = math.Exp(p[i] - mx)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// outputMatrix is the transposed float64 matrix of the output rows on the
// CPU (dim × outputs) and their squared norms: built once per
// privatization, used by every block of input words.
type outputMatrix struct {
	t    *ts.Tensor
	norm []float64
}

// withOutputs builds the output matrix, runs f on libtorch's thread and
// frees the matrix.
func (m *SanText) withOutputs(f func(*outputMatrix) error) error {
	err := torchrt.Do(func() error {
		dim := m.space.Emb.Dim
		no := len(m.outputs)
		o := make([]float64, no*dim)
		om := &outputMatrix{norm: make([]float64, no)}
		for j, r := range m.outputs {
			for i, v := range m.space.Emb.Vector(int(r)) {
				o[j*dim+i] = float64(v)
				om.norm[j] += float64(v) * float64(v)
			}
		}
		ot, err := ts.NewTensorFromData(o, []int64{int64(no), int64(dim)})
		if err != nil {
			return err
		}
		defer ot.Drop()
		if om.t, err = ot.Transpose(0, 1, false); err != nil {
			return err
		}
		defer om.t.Drop()
		return f(om)
	})
	if err != nil {
		return fmt.Errorf("santext: %w", torchrt.Clean(err))
	}
	return nil
}

// distances returns, for each input row, the Euclidean distances to every
// output row, in float64. It runs on libtorch's thread (inside withOutputs).
func (o *outputMatrix) distances(space *Space, rows []int) ([][]float64, error) {
	dim := space.Emb.Dim
	no := len(o.norm)
	q := make([]float64, len(rows)*dim)
	qn := make([]float64, len(rows))
	for j, r := range rows {
		for i, v := range space.Emb.Vector(r) {
			q[j*dim+i] = float64(v)
			qn[j] += float64(v) * float64(v)
		}
	}
	qt, err := ts.NewTensorFromData(q, []int64{int64(len(rows)), int64(dim)})
	if err != nil {
		return nil, err
	}
	defer qt.Drop()
	dot, err := qt.Mm(o.t, false)
	if err != nil {
		return nil, err
	}
	defer dot.Drop()
	buf := make([]float64, len(rows)*no)
	if err := dot.CopyData(buf, uint(len(buf))); err != nil {
		return nil, err
	}
	out := make([][]float64, len(rows))
	for j := range rows {
		row := make([]float64, no)
		for i := range row {
			row[i] = math.Sqrt(math.Max(0, qn[j]+o.norm[i]-2*buf[j*no+i]))
		}
		out[j] = row
	}
	return out, nil
}

type occurrence struct{ doc, pos int }

func (m *SanText) Privatize(ctx context.Context, docs [][]string, src Source) ([][]string, metrics.Privatization, error) {
	rep := newReport(m, m.space)
	rep.CandidateCount = len(m.outputs)
	out := cloneDocs(docs)
	byWord := map[int][]occurrence{}
	var order []int
	if err := eachWord(ctx, docs, nil, m.space, &rep, nil, func(di, pi, w int) {
		if byWord[w] == nil {
			order = append(order, w)
		}
		byWord[w] = append(byWord[w], occurrence{di, pi})
	}); err != nil {
		return nil, rep, err
	}
	sort.Ints(order)
	base := src.base()
	bar := progress.New(m.progress, rep.Tokens-rep.OOV, "privatize", false)
	defer bar.Finish()
	block := int(max(1, m.budget/(8*int64(len(m.outputs)))))
	err := m.withOutputs(func(om *outputMatrix) error {
		for lo := 0; lo < len(order); lo += block {
			if err := ctx.Err(); err != nil {
				return err
			}
			rows := order[lo:min(len(order), lo+block)]
			dist, err := om.distances(m.space, rows)
			if err != nil {
				return err
			}
			for j, w := range rows {
				m.sample(dist[j], w, byWord[w], base, out, &rep)
				bar.Add(int64(len(byWord[w])))
			}
		}
		return nil
	})
	if err != nil {
		return nil, rep, err
	}
	return out, rep, nil
}

// sample draws the output of every occurrence of input row w from its
// distances to the outputs, each from its own token stream.
func (m *SanText) sample(dist []float64, w int, occ []occurrence, base uint64, out [][]string, rep *metrics.Privatization) {
	cdf := m.weights(dist)
	for i := 1; i < len(cdf); i++ {
		cdf[i] += cdf[i-1]
	}
	for _, oc := range occ {
		r := tokenRand(base, oc.doc, oc.pos)
		if !m.sensitive[w] && !(r.Float64() < m.p) {
			rep.Unchanged++
			continue // SanText+: a non-sensitive word kept
		}
		u := r.Float64() * cdf[len(cdf)-1]
		k := sort.SearchFloat64s(cdf, u)
		if k == len(cdf) || cdf[k] == u {
			k = min(k+1, len(cdf)-1) // u exactly on a boundary belongs to the next bin
		}
		o := m.outputs[k]
		if int(o) == w {
			rep.Unchanged++
		}
		out[oc.doc][oc.pos] = m.space.Emb.Words[o]
	}
}

// santextKind and santextPlusKind register SanText and SanText+ (kind).
var (
	santextKind = kind{name: "santext", exact: true,
		build: func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
			var p SanTextParams
			if v.String("candidates") == "task" {
				if len(o.Counts) == 0 {
					return nil, fmt.Errorf("santext: candidates task needs the task's word counts")
				}
				p.Task = o.Counts
			}
			return NewSanText(s, eps, p, o.Budget)
		}}
	santextPlusKind = kind{name: "santext+", exact: true,
		build: func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
			return NewSanText(s, eps, SanTextParams{Plus: &SanTextPlus{P: v.Float("p"), SensitiveFraction: v.Float("sensitive"), Counts: o.Counts}}, o.Budget)
		}}
)

func (m *SanText) setProgress(w io.Writer) { m.progress = w }

// Bound is ε·‖φ(x) − φ(x′)‖ (SanText, TEM; SanText+ keeps it only
// between sensitive words).
func (m *SanText) Bound(x, x2 int) float64 { return m.eps * euclid(m.space, x, x2) }

// Distributions calls f with the exact output distribution of each input
// row: the output rows and their probabilities (summing to 1). For
// SanText+ a non-sensitive word keeps itself with probability 1 − p and
// is otherwise sampled like a sensitive one. Rows are processed in blocks
// sized to the mechanism's memory budget; f may keep neither slice.
func (m *SanText) Distributions(ctx context.Context, rows []int, f func(w int, outs []int32, p []float64) error) error {
	block := int(max(1, m.budget/(8*int64(len(m.outputs)))))
	self := map[int32]int{}
	for j, o := range m.outputs {
		self[o] = j
	}
	return m.withOutputs(func(om *outputMatrix) error {
		for lo := 0; lo < len(rows); lo += block {
			if err := ctx.Err(); err != nil {
				return err
			}
			part := rows[lo:min(len(rows), lo+block)]
			dist, err := om.distances(m.space, part)
			if err != nil {
				return err
			}
			for j, w := range part {
				p := m.weights(dist[j])
				outs := m.outputs
				if !m.sensitive[w] {
					for i := range p {
						p[i] *= m.p
					}
					if k, ok := self[int32(w)]; ok {
						p[k] += 1 - m.p
					} else {
						outs = append(slices.Clip(outs), int32(w))
						p = append(p, 1-m.p)
					}
				}
				if err := f(w, outs, p); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
