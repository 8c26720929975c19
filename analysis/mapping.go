package analysis

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// mapping measures CusText's f_map (Chen et al. 2023, Table 4): the share
// of the dataset's input tokens, and of its input words, that are not of
// the N–M type (mech.Mapping.Shared), and the number of output sets. How
// alike a set is, the question behind Table 3's conservative mapping: the
// mean cosine of an input word with the other members of its set
// (members taken as zero vectors count 0), averaged over input tokens,
// and the share of input tokens whose set holds such a member. How much a
// token-level privatization leaves as it was, the question behind Tables
// 5–7: the token-weighted probability that an input is returned as itself
// at the cell's ε (exact, from the mechanism's output distribution), and
// the set-mates' mean normalised score u ∈ [0, 1] that decides it (the word
// itself scores 1; recovered from the probabilities as
// u_y = 1 + 2·ln(Pr[y|x]/Pr[x|x])/ε, so that the score is normalised in one
// place, mech.CusText; a CusText+ stopword, kept as it is, has p0 = 1 and
// no set-mates).
func mapping(ctx context.Context, _ spec.Values, env Env) (metrics.Analysis, error) {
	var a metrics.Analysis
	m, ok := env.Mech.(interface{ Mapping() *mech.Mapping })
	if !ok {
		return a, fmt.Errorf("mechanism %s has no output-set mapping (custext and custext+ do)", env.Mech.Name())
	}
	mp := m.Mapping()
	dist, ok := env.Mech.(exact)
	if !ok {
		return a, fmt.Errorf("mechanism %s has no exact output distribution", env.Mech.Name())
	}
	cosines := env.Space.MemberCosines(mp) // kept with the mapping: ε-independent
	var tokens, open, words, openWords, cosSum, zeroTokens float64
	for _, x := range mp.Order {
		c := float64(env.Counts[env.Space.Emb.Words[x]])
		tokens += c
		words++
		if !mp.Shared(x) {
			open += c
			openWords++
		}
		si := mp.Of[x]
		var cs float64
		mates, zero := 0, false
		for j, y := range mp.Sets[si] {
			if y == x {
				continue
			}
			mates++
			if mp.ZeroAt(si, j) {
				zero = true
				continue
			}
			cs += cosines[x][j]
		}
		if mates > 0 {
			cosSum += c * cs / float64(mates)
		}
		if zero {
			zeroTokens += c
		}
	}
	if words == 0 {
		return a, fmt.Errorf("the mapping has no input words")
	}
	rows := make([]int, len(mp.Order))
	for i, x := range mp.Order {
		rows[i] = int(x)
	}
	eps := env.Mech.Epsilon()
	var selfSum, scoreSum float64
	err := dist.Distributions(ctx, rows, func(w int, outs []int32, p []float64) error {
		c := float64(env.Counts[env.Space.Emb.Words[w]])
		self := slices.Index(outs, int32(w))
		if self < 0 {
			return fmt.Errorf("input %q is not among its own outputs", env.Space.Emb.Words[w])
		}
		selfSum += c * p[self]
		if len(p) > 1 {
			var us float64
			for j := range p {
				if j != self {
					us += 1 + 2*math.Log(p[j]/p[self])/eps
				}
			}
			scoreSum += c * us / float64(len(p)-1)
		}
		return nil
	})
	if err != nil {
		return a, err
	}
	a.Method = "exact, from the mapping"
	a.Add("not N–M % tokens", 100*open/tokens)
	a.Add("not N–M % words", 100*openWords/words)
	a.Add("input words", words)
	a.Add("output sets", float64(len(mp.Sets)))
	a.Add("set-mates' cosine", cosSum/tokens)
	a.Add("zero-vector sets % tokens", 100*zeroTokens/tokens)
	a.Add("p0 % tokens", 100*selfSum/tokens)
	a.Add("set-mates' score", scoreSum/tokens)
	return a, nil
}

// mappingKind registers the mapping analysis (kind).
var mappingKind = kind{name: "mapping", run: mapping,
	plan: func(v spec.Values, env Env) (Work, error) {
		return Work{Rows: len(datasetRows(env)), Draws: 1}, nil
	}}
