package analysis

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/internal/rng"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/models"
	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/torchrt"
)

// Tags of the reconstruction attacker: the observed word is the original
// (copy), the original is outside the attacker's vocabulary (other, never
// right), or a vocabulary word (firstWord + its index).
const (
	tagCopy   = 0
	tagOther  = 1
	firstWord = 2
)

// reconstruct is a context-aware reconstruction attack (after Tong et
// al., NAACL 2025): an attacker who sees privatized sentences predicts
// each original token. Sentences of the dataset's texts are split by the
// seed into the evaluated ones (`test`) and a disjoint set the attacker
// learns from (`sentences`), both privatized by the cell's mechanism at
// its ε (streams of their own). The attacker is a biLSTM tagger over the
// privatized tokens' vectors (the space's vectors, frozen), tagging each
// token with its original: copy (the observed word is the original), one
// of the `vocab` most frequent original words of its training text, or
// other. Beside it, the context-free attacker on the same pairs: each
// observed word's most frequent tag in the training pairs (copy for a word
// never observed) — the Bayes MAP attacker under the training text's
// prior, so the difference is what context adds. Both are scored on the
// evaluated tokens that have a vector (the mechanism leaves the others
// unchanged), overall and on rare words (at most `rare` occurrences in
// the attacker's training text), each text cut to max_len tokens.
func reconstruct(ctx context.Context, v spec.Values, env Env) (metrics.Analysis, error) {
	var a metrics.Analysis
	if len(env.Texts) == 0 {
		return a, fmt.Errorf("needs the dataset's texts")
	}
	emb := env.Space.Emb
	maxLen := v.Int("max_len")
	var pool []int
	for i, d := range env.Texts {
		if len(d) > 0 {
			pool = append(pool, i)
		}
	}
	nTest, nTrain := v.Int("test"), v.Int("sentences")
	if len(pool) < nTest+nTrain {
		return a, fmt.Errorf("%d texts for %d evaluated and %d training sentences", len(pool), nTest, nTrain)
	}
	picked := sample(pool, nTest+nTrain, env.Seed)
	cut := func(idx []int) [][]string {
		docs := make([][]string, len(idx))
		for i, j := range idx {
			docs[i] = env.Texts[j][:min(len(env.Texts[j]), maxLen)]
		}
		return docs
	}
	testDocs, trainDocs := cut(picked[:nTest]), cut(picked[nTest:])
	privatize := func(docs [][]string, split string) ([][]string, error) {
		src := env.Source
		src.Split = split
		out, _, err := env.Mech.Privatize(ctx, docs, src)
		return out, err
	}
	trainPriv, err := privatize(trainDocs, "attack-train")
	if err != nil {
		return a, err
	}
	testPriv, err := privatize(testDocs, "attack-test")
	if err != nil {
		return a, err
	}
	a.Lookups = int64(tokens(trainDocs) + tokens(testDocs))

	// The attacker's vocabulary: its training text's most frequent
	// original words with a vector (ties by the word).
	freq := map[string]int{}
	for _, d := range trainDocs {
		for _, w := range d {
			if _, ok := emb.Index(w); ok {
				freq[w]++
			}
		}
	}
	words := make([]string, 0, len(freq))
	for w := range freq {
		words = append(words, w)
	}
	slices.SortFunc(words, func(x, y string) int { return cmp.Or(cmp.Compare(freq[y], freq[x]), cmp.Compare(x, y)) })
	words = words[:min(len(words), v.Int("vocab"))]
	class := make(map[string]int64, len(words))
	for i, w := range words {
		class[w] = int64(firstWord + i)
	}
	tag := func(orig, priv string) int64 {
		switch c, ok := class[orig]; {
		case orig == priv:
			return tagCopy
		case ok:
			return c
		}
		return tagOther
	}
	right := func(t int64, orig, priv string) bool {
		if t == tagCopy {
			return orig == priv
		}
		return t >= firstWord && words[t-firstWord] == orig
	}

	// Inputs: row+1 for a word with a vector, n+1 for one without, 0 pad.
	n := emb.Len()
	ids := func(docs [][]string) [][]int64 {
		out := make([][]int64, len(docs))
		for i, d := range docs {
			out[i] = make([]int64, len(d))
			for j, w := range d {
				out[i][j] = int64(n + 1)
				if r, ok := emb.Index(w); ok {
					out[i][j] = int64(r + 1)
				}
			}
		}
		return out
	}
	trainIDs, testIDs := ids(trainPriv), ids(testPriv)
	trainTags := make([][]int64, len(trainDocs))
	mapCounts := map[string]map[int64]int{} // observed word → tags seen with it
	for i, d := range trainDocs {
		trainTags[i] = make([]int64, len(d))
		for j, w := range d {
			t := tag(w, trainPriv[i][j])
			trainTags[i][j] = t
			if mapCounts[trainPriv[i][j]] == nil {
				mapCounts[trainPriv[i][j]] = map[int64]int{}
			}
			mapCounts[trainPriv[i][j]][t]++
		}
	}
	pred, err := trainTagger(ctx, v, env, trainIDs, trainTags, testIDs, int64(firstWord+len(words)))
	if err != nil {
		return a, err
	}

	var all, rare, same, ctxAll, ctxRare, freeAll, freeRare, reachable int
	for i, d := range testDocs {
		for j, w := range d {
			if _, ok := emb.Index(w); !ok {
				continue
			}
			p := testPriv[i][j]
			isRare := freq[w] <= v.Int("rare")
			all++
			if isRare {
				rare++
			}
			if w == p {
				same++
			}
			if _, ok := class[w]; ok || w == p {
				reachable++
			}
			free := int64(tagCopy)
			if c := mapCounts[p]; c != nil {
				best := -1
				for t, k := range c {
					if k > best || k == best && t < free {
						free, best = t, k
					}
				}
			}
			if right(pred[i][j], w, p) {
				ctxAll++
				if isRare {
					ctxRare++
				}
			}
			if right(free, w, p) {
				freeAll++
				if isRare {
					freeRare++
				}
			}
		}
	}
	pct := func(x, of int) float64 { return 100 * float64(x) / float64(max(of, 1)) }
	a.Method = fmt.Sprintf("attacker trained on %d privatized sentences (%d tokens), %d epochs", len(trainDocs), tokens(trainDocs), v.Int("epochs"))
	a.Add("tokens", float64(all))
	a.Add("unchanged %", pct(same, all))
	a.Add("recovery %", pct(ctxAll, all))
	a.Add("context-free recovery %", pct(freeAll, all))
	a.Add("rare tokens", float64(rare))
	a.Add("recovery % rare", pct(ctxRare, rare))
	a.Add("context-free recovery % rare", pct(freeRare, rare))
	a.Add("reachable %", pct(reachable, all))
	return a, nil
}

func tokens(docs [][]string) int {
	n := 0
	for _, d := range docs {
		n += len(d)
	}
	return n
}

// trainTagger trains the attacker on the tagged training sequences and
// returns its tags of the test sequences. Input rows are the space's
// vectors (frozen), after a zero padding row, with one zero row for
// words without a vector.
func trainTagger(ctx context.Context, v spec.Values, env Env, trainIDs, trainTags, testIDs [][]int64, classes int64) ([][]int64, error) {
	emb := env.Space.Emb
	n, dim := emb.Len(), emb.Dim
	pre := make([]float32, (n+2)*dim)
	copy(pre[dim:], emb.Data)
	cfg := models.BiLSTMConfig{Vocab: int64(n + 2), EmbedDim: int64(dim), Hidden: int64(v.Int("hidden")), Layers: 1, Classes: classes,
		LR: v.Float("lr"), ClipNorm: 5, Pretrained: pre, Freeze: !v.Bool("fine_tune")}
	const batch = 32
	var pred [][]int64
	err := torchrt.Do(func() error {
		torchrt.ManualSeed(int64(rng.SplitMix64(env.Seed ^ 0x746167676572))) // "tagger"
		m, err := models.NewTagger(cfg, gotch.CPU)
		if err != nil {
			return err
		}
		defer m.Close()
		r := rand.New(rand.NewPCG(env.Seed, 0x61747461636b)) // "attack"
		order := make([]int, len(trainIDs))
		for i := range order {
			order[i] = i
		}
		for range v.Int("epochs") {
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for lo := 0; lo < len(order); lo += batch {
				if err := ctx.Err(); err != nil {
					return err
				}
				b, err := models.NewTagBatch(trainIDs, trainTags, order[lo:min(len(order), lo+batch)], 0, 0, gotch.CPU)
				if err != nil {
					return err
				}
				_, err = m.Step(b)
				b.Drop()
				if err != nil {
					return err
				}
			}
		}
		pred = make([][]int64, len(testIDs))
		for lo := 0; lo < len(testIDs); lo += 256 {
			idx := make([]int, 0, 256)
			for i := lo; i < min(len(testIDs), lo+256); i++ {
				idx = append(idx, i)
			}
			b, err := models.NewTagBatch(testIDs, nil, idx, 0, 0, gotch.CPU)
			if err != nil {
				return err
			}
			p, err := m.Predict(b)
			b.Drop()
			if err != nil {
				return err
			}
			for k, i := range idx {
				pred[i] = p[k]
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("attacker: %w", torchrt.Clean(err))
	}
	return pred, nil
}
