package analysis

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/xp-nlp/xp/internal/rng"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/spec"
)

// sampleWords returns the rows an analysis over a word sample is about:
// words sampled by the seed, without replacement, from the candidates or
// the dataset's vocabulary (most frequent first, restricted to top), or
// the list given.
func sampleWords(v spec.Values, env Env) ([]int, error) {
	emb := env.Space.Emb
	if v.String("from") == "list" {
		return rowsOf(v.Strings("list"), env)
	}
	var pool []int
	switch v.String("from") {
	case "dataset":
		pool = datasetRows(env)
	default:
		pool = make([]int, emb.Len())
		for i := range pool {
			pool[i] = i
		}
	}
	if top := v.Int("top"); top > 0 && top < len(pool) {
		pool = pool[:top]
	}
	return sample(pool, v.Int("words"), env.Seed), nil
}

// rowsOf looks the words up; a word without a vector is an error.
func rowsOf(words []string, env Env) ([]int, error) {
	var rows []int
	for _, w := range words {
		i, ok := env.Space.Emb.Index(w)
		if !ok {
			return nil, fmt.Errorf("%q has no vector in %s", w, env.Space.Emb.String())
		}
		rows = append(rows, i)
	}
	return rows, nil
}

// topRows are datasetRows, the top most frequent when top > 0.
func topRows(env Env, top int) []int {
	rows := datasetRows(env)
	if top > 0 && top < len(rows) {
		rows = rows[:top]
	}
	return rows
}

// datasetRows are the rows of the dataset's words that have a vector,
// most frequent first (ties by word).
func datasetRows(env Env) []int {
	type wc struct {
		w string
		c int64
		i int
	}
	var ws []wc
	for w, c := range env.Counts {
		if i, ok := env.Space.Emb.Index(w); ok && c > 0 {
			ws = append(ws, wc{w, c, i})
		}
	}
	slices.SortFunc(ws, func(a, b wc) int {
		if c := cmp.Compare(b.c, a.c); c != 0 {
			return c
		}
		return cmp.Compare(a.w, b.w)
	})
	rows := make([]int, len(ws))
	for i, x := range ws {
		rows[i] = x.i
	}
	return rows
}

// sample draws n of pool without replacement (a partial Fisher–Yates
// shuffle seeded by seed); n ≥ len(pool) or n = 0 returns all of pool.
func sample(pool []int, n int, seed uint64) []int {
	if n <= 0 || n >= len(pool) {
		return slices.Clone(pool)
	}
	p := slices.Clone(pool)
	r := rand.New(rand.NewPCG(rng.SplitMix64(seed), rng.SplitMix64(seed^0x616e616c79736973))) // "analysis"
	for i := 0; i < n; i++ {
		j := i + r.IntN(len(p)-i)
		p[i], p[j] = p[j], p[i]
	}
	return p[:n]
}

// drawer is implemented by mechanisms that draw many privatizations of
// single words in shared search batches (mech.Laplace, mech.Vickrey,
// mech.Mahalanobis), with the streams of per-word Privatize calls.
type drawer interface {
	Draws(ctx context.Context, rows []int, n int, src mech.Source, f func(i int, outs []int32) error) error
}

// draws privatizes each row m times and returns each row's output counts
// and the number of draws made. Each word draws from its own streams
// (mech.WordSource: draw j is document j of a Privatize call of m
// single-token documents), so a word's draws do not depend on which other
// words are drawn: words env.Memo holds are taken from it, the others
// drawn and added to it. Mechanisms that implement drawer share search
// batches across words; the others (SanText, CusText when asked for
// sampling) privatize word by word.
func draws(ctx context.Context, env Env, rows []int, m int) ([]map[int32]int, int64, error) {
	emb := env.Space.Emb
	out := make([]map[int32]int, len(rows))
	todo := make([]int, 0, len(rows)) // indexes into rows of the words to draw
	if env.Memo != nil {
		words := make([]string, len(rows))
		for i, w := range rows {
			words[i] = emb.Words[w]
		}
		kept, err := env.Memo.Get(m, words)
		if err != nil {
			return nil, 0, err
		}
		for i, w := range words {
			if c, ok := kept[w]; ok {
				out[i] = c
			} else {
				todo = append(todo, i)
			}
		}
	} else {
		for i := range rows {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return out, 0, nil
	}
	count := func(i int, outs []int32) error {
		c := map[int32]int{}
		for _, o := range outs {
			c[o]++
		}
		out[todo[i]] = c
		return nil
	}
	sub := make([]int, len(todo))
	for i, j := range todo {
		sub[i] = rows[j]
	}
	lookups := int64(len(sub)) * int64(m)
	if len(env.Shared) > 0 {
		if err := sharedDraws(ctx, env, sub, m, count); err != nil {
			return nil, 0, err
		}
	} else if d, ok := env.Mech.(drawer); ok {
		if err := d.Draws(ctx, sub, m, env.Source, count); err != nil {
			return nil, 0, err
		}
	} else {
		docs := make([][]string, m)
		outs := make([]int32, m)
		for i, w := range sub {
			for j := range docs {
				docs[j] = []string{emb.Words[w]}
			}
			priv, _, err := env.Mech.Privatize(ctx, docs, mech.WordSource(env.Source, emb.Words[w]))
			if err != nil {
				return nil, 0, err
			}
			for j, d := range priv {
				o, ok := emb.Index(d[0])
				if !ok {
					return nil, 0, fmt.Errorf("mechanism output %q is not a candidate", d[0])
				}
				outs[j] = int32(o)
			}
			count(i, outs)
		}
	}
	if env.Memo != nil {
		drawn := make(map[string]map[int32]int, len(todo))
		for _, j := range todo {
			drawn[emb.Words[rows[j]]] = out[j]
		}
		if err := env.Memo.Put(m, drawn); err != nil {
			return nil, 0, err
		}
	}
	return out, lookups, nil
}

// sharedDraws draws rows m times under env.Mech and the mechanisms of
// env.Shared at once (mech.SharedDraws), calls count with env.Mech's
// outputs, and keeps the others' counts in their memos.
func sharedDraws(ctx context.Context, env Env, rows []int, m int, count func(i int, outs []int32) error) error {
	ms := []mech.Mechanism{env.Mech}
	others := make([]map[string]map[int32]int, len(env.Shared))
	for c, sh := range env.Shared {
		ms = append(ms, sh.Mech)
		others[c] = make(map[string]map[int32]int, len(rows))
	}
	words := env.Space.Emb.Words
	err := mech.SharedDraws(ctx, ms, rows, m, env.Source, func(c, i int, outs []int32) error {
		if c == 0 {
			return count(i, outs)
		}
		n := map[int32]int{}
		for _, o := range outs {
			n[o]++
		}
		others[c-1][words[rows[i]]] = n
		return nil
	})
	if err != nil {
		return err
	}
	for c, sh := range env.Shared {
		if sh.Memo == nil {
			continue
		}
		if err := sh.Memo.Put(m, others[c]); err != nil {
			return err
		}
	}
	return nil
}

// distribution is one word's output distribution: exact, or estimated
// from draws.
type distribution struct {
	outs []int32
	p    []float64
}

// distributions returns the rows' output distributions: exact where the
// mechanism knows them and useExact is set, otherwise estimated from m
// draws each. method says which.
func distributions(ctx context.Context, env Env, rows []int, m int, useExact bool) (ds []distribution, method string, lookups int64, err error) {
	if x, ok := env.Mech.(exact); ok && useExact {
		ds = make([]distribution, len(rows))
		pos := map[int]int{}
		for i, w := range rows {
			pos[w] = i
		}
		err = x.Distributions(ctx, rows, func(w int, outs []int32, p []float64) error {
			ds[pos[w]] = distribution{slices.Clone(outs), slices.Clone(p)}
			return nil
		})
		return ds, "exact", 0, err
	}
	counts, lookups, err := draws(ctx, env, rows, m)
	if err != nil {
		return nil, "", lookups, err
	}
	ds = make([]distribution, len(rows))
	for i, c := range counts {
		outs := slices.Sorted(maps.Keys(c))
		p := make([]float64, len(outs))
		for j, o := range outs {
			p[j] = float64(c[o]) / float64(m)
		}
		ds[i] = distribution{outs, p}
	}
	return ds, fmt.Sprintf("sampled (%d draws per word)", m), lookups, nil
}
