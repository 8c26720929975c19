package mech

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/torchrt"
)

// SanText is the exponential mechanism of Yue et al. (Findings of ACL
// 2021): Pr[ŵ | w] ∝ exp(−½·ε·‖φ(w) − φ(ŵ)‖) over every candidate ŵ.
// It is ε·d_χ-private with d Euclidean.
//
// SanText+ (same paper; definition taken from the authors' code,
// xiangyue9607/SanText, SanText.py SanText_plus and run_SanText.py): the
// SensitiveFraction least frequent words of the task vocabulary are
// sensitive; the output set is the sensitive words only; a sensitive word
// is always sampled, a non-sensitive word is sampled with probability P
// and otherwise kept. The probabilities are the same softmax of −ε·d/2
// restricted to the sensitive outputs. Only sensitive words get the
// metric-DP guarantee, so SanText+ reports NoDP.
//
// Sampling is exact with bounded memory: for each distinct input word
// the distances to all candidates are computed in float64 (libtorch),
// turned into a cumulative distribution once and used for every
// occurrence of the word, in blocks of words sized to a memory budget:
// never the reference code's dense V × V matrix.
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
}

// SanTextPlus configures SanText+; nil means plain SanText.
type SanTextPlus struct {
	P                 float64          // probability that a non-sensitive word is sanitized (paper: 0.3)
	SensitiveFraction float64          // share of the vocabulary deemed sensitive, least frequent first (paper: 0.9)
	Counts            map[string]int64 // word frequencies of the task data
}

// NewSanText returns SanText (plus == nil) or SanText+ at ε.
func NewSanText(space *Space, eps float64, plus *SanTextPlus, budget int64) (*SanText, error) {
	if !(eps > 0) {
		return nil, fmt.Errorf("santext: ε = %v, want > 0", eps)
	}
	m := &SanText{eps: eps, space: space, budget: budget}
	if m.budget <= 0 {
		m.budget = 256 << 20
	}
	n := space.Emb.Len()
	m.sensitive = make([]bool, n)
	if plus == nil {
		m.outputs = make([]int32, n)
		for i := range m.outputs {
			m.outputs[i] = int32(i)
			m.sensitive[i] = true
		}
		return m, nil
	}
	if !(plus.P >= 0 && plus.P <= 1) || !(plus.SensitiveFraction > 0 && plus.SensitiveFraction <= 1) {
		return nil, fmt.Errorf("santext+: p = %v and sensitive fraction %v, want p ∈ [0, 1] and fraction ∈ (0, 1]", plus.P, plus.SensitiveFraction)
	}
	m.plus, m.p, m.frac = true, plus.P, plus.SensitiveFraction
	// Order candidate words by task frequency, most common first (ties by
	// row, i.e. embedding order); the last fraction are sensitive.
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(i)
	}
	sort.SliceStable(rows, func(a, b int) bool {
		return plus.Counts[space.Emb.Words[rows[a]]] > plus.Counts[space.Emb.Words[rows[b]]]
	})
	ns := int(math.Round(plus.SensitiveFraction * float64(n)))
	for _, r := range rows[n-ns:] {
		m.sensitive[r] = true
	}
	for i := 0; i < n; i++ {
		if m.sensitive[i] {
			m.outputs = append(m.outputs, int32(i))
		}
	}
	if len(m.outputs) == 0 {
		return nil, fmt.Errorf("santext+: no sensitive words")
	}
	return m, nil
}

func (m *SanText) Name() string {
	if m.plus {
		return "santext+(p=" + strconv.FormatFloat(m.p, 'g', -1, 64) + ",sensitive=" + strconv.FormatFloat(m.frac, 'g', -1, 64) + ")"
	}
	return "santext"
}

func (m *SanText) Notion() Notion {
	if m.plus {
		return NoDP
	}
	return MetricDP
}

func (m *SanText) Epsilon() float64 { return m.eps }

// Probabilities returns the exact output distribution of input row w over
// m's output rows (for privacy measures and tests).
func (m *SanText) Probabilities(w int) ([]int32, []float64, error) {
	d, err := m.distances([]int{w})
	if err != nil {
		return nil, nil, err
	}
	p := m.weights(d[0])
	return m.outputs, p, nil
}

// weights turns distances into normalized probabilities exp(−ε d/2)/Z.
func (m *SanText) weights(d []float64) []float64 {
	p := make([]float64, len(d))
	mx := math.Inf(-1)
	for i, x := range d {
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

// distances returns, for each input row, the Euclidean distances to every
// output row, in float64.
func (m *SanText) distances(rows []int) ([][]float64, error) {
	dim := m.space.Emb.Dim
	no := len(m.outputs)
	out := make([][]float64, len(rows))
	err := torchrt.Do(func() error {
		o := make([]float64, no*dim)
		on := make([]float64, no)
		for j, r := range m.outputs {
			for i, v := range m.space.Emb.Vector(int(r)) {
				o[j*dim+i] = float64(v)
				on[j] += float64(v) * float64(v)
			}
		}
		q := make([]float64, len(rows)*dim)
		qn := make([]float64, len(rows))
		for j, r := range rows {
			for i, v := range m.space.Emb.Vector(r) {
				q[j*dim+i] = float64(v)
				qn[j] += float64(v) * float64(v)
			}
		}
		ot, err := ts.NewTensorFromData(o, []int64{int64(no), int64(dim)})
		if err != nil {
			return err
		}
		defer ot.Drop()
		qt, err := ts.NewTensorFromData(q, []int64{int64(len(rows)), int64(dim)})
		if err != nil {
			return err
		}
		defer qt.Drop()
		ott, err := ot.Transpose(0, 1, false)
		if err != nil {
			return err
		}
		defer ott.Drop()
		dot, err := qt.Mm(ott, false)
		if err != nil {
			return err
		}
		defer dot.Drop()
		buf := make([]float64, len(rows)*no)
		if err := dot.CopyData(buf, uint(len(buf))); err != nil {
			return err
		}
		for j := range rows {
			row := make([]float64, no)
			for i := range row {
				row[i] = math.Sqrt(math.Max(0, qn[j]+on[i]-2*buf[j*no+i]))
			}
			out[j] = row
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("santext distances: %w", torchrt.Clean(err))
	}
	return out, nil
}

type occurrence struct{ doc, pos int }

func (m *SanText) Privatize(ctx context.Context, docs [][]string, src Source) ([][]string, Report, error) {
	rep := newReport(m, m.space)
	out := make([][]string, len(docs))
	byWord := map[int][]occurrence{}
	var order []int
	for di, d := range docs {
		out[di] = append([]string(nil), d...)
		for pi, tok := range d {
			rep.Tokens++
			w, ok := m.space.Emb.Index(tok)
			if !ok {
				rep.OOV++
				continue
			}
			if byWord[w] == nil {
				order = append(order, w)
			}
			byWord[w] = append(byWord[w], occurrence{di, pi})
		}
	}
	sort.Ints(order)
	base := src.base()
	bar := progress.New(m.progress, rep.Tokens-rep.OOV, "privatize", false)
	defer bar.Finish()
	block := int(max(1, m.budget/(8*int64(len(m.outputs)))))
	for lo := 0; lo < len(order); lo += block {
		if err := ctx.Err(); err != nil {
			return nil, rep, err
		}
		rows := order[lo:min(len(order), lo+block)]
		dist, err := m.distances(rows)
		if err != nil {
			return nil, rep, err
		}
		for j, w := range rows {
			cdf := m.weights(dist[j])
			for i := 1; i < len(cdf); i++ {
				cdf[i] += cdf[i-1]
			}
			for _, oc := range byWord[w] {
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
			bar.Add(int64(len(byWord[w])))
		}
	}
	return out, rep, nil
}
