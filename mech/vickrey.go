package mech

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/xp-nlp/xp/spec"
)

// VickreyParams select among the Vickrey variants (Xu et al. 2021).
type VickreyParams struct {
	// T ∈ [0, 1] of Algorithm 1: between the two nearest candidates of the
	// noisy vector (d1 ≤ d2) the first is output with probability
	// p = (1−t)·d2 / (t·d1 + (1−t)·d2). t = 0 is Laplace, t = 1 always
	// takes the second.
	T float64
	// ExcludeInput removes the input word from the candidates, as the
	// paper's pseudo-code does. Its proof and its "t = 0 is Laplace" need
	// the input to stay a candidate: with exclusion the mechanism has no
	// metric-DP guarantee and reports NoDP. Default false.
	ExcludeInput bool
	// TR, when set, is the generalized form (Algorithm 3): the len(TR)
	// nearest, ordered; the r-th is output with probability
	// ∝ exp(−TR[r]·d_r).
	TR []float64
	// Rank, when > 0, is the deterministic variant of the paper's Fig. 3:
	// always the Rank-th nearest candidate of the noisy vector.
	Rank int
	// Mahalanobis, when set, draws the Mahalanobis mechanism's elliptical
	// noise with Σ_p = λΣ + (1−λ)I, λ = Lambda, instead of Laplace's
	// (pyPANTERA's VickreyMhl): the selection stays post-processing, so
	// the guarantee is ε·d in the Mahalanobis metric.
	Mahalanobis bool
	Lambda      float64
}

// Vickrey is the Vickrey mechanism. Without input exclusion the choice
// uses only the noisy vector, public candidates and fresh randomness, so
// it is post-processing of the Laplace mechanism's noisy vector and keeps
// its ε·d_χ guarantee for every variant.
type Vickrey struct {
	noisyNN
	p      VickreyParams
	metric *mahalanobisMetric // with lambda
}

// NewVickrey returns the mechanism at ε.
func NewVickrey(space *Space, eps float64, p VickreyParams, batch int) (*Vickrey, error) {
	if _, err := check("vickrey", eps, p.raw()); err != nil {
		return nil, err
	}
	keep := 2
	switch {
	case len(p.TR) > 0:
		keep = len(p.TR)
	case p.Rank > 0:
		keep = p.Rank
	}
	k := keep
	if p.ExcludeInput {
		k++
	}
	if k > space.Index.Len() {
		return nil, fmt.Errorf("vickrey: needs %d neighbours, the vocabulary has %d words", k, space.Index.Len())
	}
	v := &Vickrey{p: p}
	v.noisyNN = noisyNN{self: v, space: space, k: k, batch: batch, eps: eps, noise: "laplace", pick: func(r *rand.Rand, w int, ids []int32, d []float64) int32 {
		ids, d = v.exclude(w, ids, d, keep)
		return v.choose(r, ids, d)
	}}
	if p.Mahalanobis {
		s, err := space.sigmaSqrt(p.Lambda)
		if err != nil {
			return nil, err
		}
		v.mix = ellipticalMix(s, space.Emb.Dim)
		v.noise = ellipticalNoise(p.Lambda)
		v.metric = &mahalanobisMetric{sqrt: s}
	}
	return v, nil
}

// raw is the parameters as the descriptor names them: T counts only for
// the two-neighbour form (or when set beside another variant, which the
// descriptor refuses).
func (p VickreyParams) raw() map[string]any {
	raw := map[string]any{"exclude_input": p.ExcludeInput}
	if p.TR != nil {
		raw["t_r"] = p.TR
	}
	if p.Rank != 0 {
		raw["rank"] = p.Rank
	}
	if p.T != 0 || (p.TR == nil && p.Rank == 0) {
		raw["t"] = p.T
	}
	if p.Mahalanobis {
		raw["lambda"] = p.Lambda
	}
	return raw
}

// exclude drops the input word from the ordered neighbours when asked to,
// keeping the first keep.
func (v *Vickrey) exclude(w int, ids []int32, d []float64, keep int) ([]int32, []float64) {
	if !v.p.ExcludeInput {
		return ids, d
	}
	for j, id := range ids {
		if int(id) == w {
			ids2 := append(append([]int32(nil), ids[:j]...), ids[j+1:]...)
			d2 := append(append([]float64(nil), d[:j]...), d[j+1:]...)
			return ids2[:keep], d2[:keep]
		}
	}
	return ids[:keep], d[:keep]
}

// choose applies the variant's selection to neighbours ordered by
// distance; r is the token's stream after its noise was drawn.
func (v *Vickrey) choose(r *rand.Rand, ids []int32, d []float64) int32 {
	switch {
	case v.p.Rank > 0:
		return ids[v.p.Rank-1]
	case len(v.p.TR) > 0:
		return ids[pickExp(r, v.p.TR, d)]
	}
	return ids[vickreyChoice(r.Float64(), v.p.T, d[0], d[1])]
}

// vickreyChoice returns 0 (the nearer candidate) when u < p(t), else 1.
// Where d1 = d2 = 0 (the noisy vector sits on two equal vectors) p is its
// limit along d1 = d2, 1 − t.
func vickreyChoice(u, t, d1, d2 float64) int {
	den := t*d1 + (1-t)*d2
	p := 1 - t
	if den > 0 {
		p = (1 - t) * d2 / den
	}
	if u < p {
		return 0
	}
	return 1
}

// pickExp draws index r with probability ∝ exp(−t_r·d_r).
func pickExp(r *rand.Rand, t, d []float64) int {
	lw := make([]float64, len(t))
	mx := math.Inf(-1)
	for i := range t {
		lw[i] = -t[i] * d[i]
		mx = math.Max(mx, lw[i])
	}
	var sum float64
	for i := range lw {
		lw[i] = math.Exp(lw[i] - mx)
		sum += lw[i]
	}
	u := r.Float64() * sum
	for i, w := range lw {
		if u < w {
			return i
		}
		u -= w
	}
	return len(lw) - 1
}

func (v *Vickrey) Name() string {
	var b strings.Builder
	b.WriteString("vickrey(")
	switch {
	case v.p.Rank > 0:
		b.WriteString("rank=" + strconv.Itoa(v.p.Rank))
	case len(v.p.TR) > 0:
		b.WriteString("t_r=" + floats(v.p.TR))
	default:
		b.WriteString("t=" + strconv.FormatFloat(v.p.T, 'g', -1, 64))
	}
	if v.p.ExcludeInput {
		b.WriteString(",exclude_input")
	}
	if v.p.Mahalanobis {
		b.WriteString(",lambda=" + strconv.FormatFloat(v.p.Lambda, 'g', -1, 64))
	}
	b.WriteString(")")
	return b.String()
}

func floats(x []float64) string {
	s := make([]string, len(x))
	for i, f := range x {
		s[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "[" + strings.Join(s, ",") + "]"
}

func (v *Vickrey) Notion() spec.Notion {
	if v.p.ExcludeInput {
		return spec.NoDP
	}
	return spec.MetricDP
}

// vickreyKind registers the Vickrey mechanism (kind).
var vickreyKind = kind{name: "vickrey", search: true,
	build: func(s *Space, eps float64, v spec.Values, o Options) (Mechanism, error) {
		p := VickreyParams{ExcludeInput: v.Bool("exclude_input"), TR: v.Floats("t_r"), Rank: v.Int("rank"), Mahalanobis: v.Has("lambda"), Lambda: v.Float("lambda")}
		if p.TR == nil && p.Rank == 0 {
			p.T = v.Float("t")
		}
		return NewVickrey(s, eps, p, o.Batch)
	}}

// Bound is ε·d with d Euclidean, or the Mahalanobis metric with lambda.
func (v *Vickrey) Bound(x, x2 int) float64 {
	if v.p.Mahalanobis {
		return v.eps * v.metric.distance(v.space, x, x2)
	}
	return v.eps * euclid(v.space, x, x2)
}
