package analysis

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/xp-nlp/xp/datasets/embedding"
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
// privatized tokens' vectors (the space's vectors, trained further
// unless fine_tune is false), tagging each
// token with its original: copy (the observed word is the original), one
// of the `vocab` most frequent original words of its training text, or
// other. Beside it, the context-free attacker on the same pairs: each
// observed word's most frequent tag in the training pairs (copy for a word
// never observed) — the Bayes MAP attacker under the training text's
// prior, so the difference is what context adds. Both are scored on the
// evaluated tokens that have a vector (the mechanism leaves the others
// unchanged), overall and on rare words (at most `rare` occurrences in
// the attacker's training text), each text cut to max_len tokens.
// CopyMargin is how many percentage points above the unchanged share a
// reconstruction attack's recovery must be to be read as more than
// copying (and above another attacker's to be read as stronger).
const CopyMargin = 0.5

func reconstruct(ctx context.Context, v spec.Values, env Env) (metrics.Analysis, error) {
	var a metrics.Analysis
	p, err := newAttackPairs(ctx, v, env)
	if err != nil {
		return a, err
	}
	a.Lookups = p.lookups
	pred, err := trainTagger(ctx, v, env, p.ids(p.trainPriv), p.trainTags, p.ids(p.testPriv), int64(firstWord+len(p.words)))
	if err != nil {
		return a, err
	}
	sc := p.score(v.Int("rare"), func(i, j int) int64 { return pred[i][j] })
	a.Method = fmt.Sprintf("attacker trained on %d privatized sentences (%d tokens), %d epochs", len(p.trainDocs), tokens(p.trainDocs), v.Int("epochs"))
	a.Add("tokens", float64(sc.all))
	a.Add("unchanged %", sc.pct(sc.same, sc.all))
	a.Add("recovery %", sc.pct(sc.ctxAll, sc.all))
	if copying := sc.pct(sc.same, sc.all); sc.pct(sc.ctxAll, sc.all) <= copying+CopyMargin {
		// The tagger recovers no more than copying every observed token
		// would: it learned to copy, and says nothing of context.
		a.Flag(fmt.Sprintf("no better than copying (recovery within %g points of the unchanged share)", CopyMargin))
	}
	a.Add("context-free recovery %", sc.pct(sc.freeAll, sc.all))
	a.Add("rare tokens", float64(sc.rare))
	a.Add("recovery % rare", sc.pct(sc.ctxRare, sc.rare))
	a.Add("context-free recovery % rare", sc.pct(sc.freeRare, sc.rare))
	a.Add("reachable %", sc.pct(sc.reachable, sc.all))
	return a, nil
}

// CheapRecovery is what the reconstruction analysis's attackers that need
// no training recover, each in percent of the evaluated tokens with a
// vector: copying (naming the observed word itself: the unchanged share)
// and the context-free attacker (each observed word's most frequent
// original in the training pairs, copying a word never observed).
type CheapRecovery struct{ Copy, ContextFree float64 }

// Best is the stronger of the two attackers' recovery and its name
// ("context-free" where it beats copying, else "copying").
func (r CheapRecovery) Best() (pct float64, attacker string) {
	if r.ContextFree > r.Copy {
		return r.ContextFree, "context-free"
	}
	return r.Copy, "copying"
}

// ContextFreeRecovery is the reconstruction analysis's attackers that
// need no training (CheapRecovery), on the very pairs the analysis draws
// for env's mechanism, ε and seed. It costs the privatization of the
// attacker's and the evaluated texts, no training: what the
// matched-privacy stage searches ε on before it runs the whole attack at
// the ε found.
func ContextFreeRecovery(ctx context.Context, params map[string]any, env Env) (r CheapRecovery, lookups int64, err error) {
	_, v, err := spec.Resolve(spec.Analysis, "reconstruction", 1, params)
	if err != nil {
		return r, 0, err
	}
	p, err := newAttackPairs(ctx, v, env)
	if err != nil {
		return r, 0, fmt.Errorf("reconstruction: %w", err)
	}
	sc := p.score(v.Int("rare"), nil)
	return CheapRecovery{Copy: sc.pct(sc.same, sc.all), ContextFree: sc.pct(sc.freeAll, sc.all)}, p.lookups, nil
}

// attackPairs are the reconstruction attack's data: the attacker's
// training texts and the evaluated ones, each original and privatized,
// the attacker's vocabulary and tags, and the context-free attacker's
// counts of tags per observed word.
type attackPairs struct {
	emb                 *embedding.Embedding
	trainDocs, testDocs [][]string
	trainPriv, testPriv [][]string
	freq                map[string]int // original words with a vector in the training texts
	words               []string       // the attacker's vocabulary, most frequent first
	class               map[string]int64
	trainTags           [][]int64
	mapCounts           map[string]map[int64]int // observed word → tags seen with it
	lookups             int64
}

// newAttackPairs samples the dataset's texts by the seed into the
// evaluated ones (`test`) and a disjoint set the attacker learns from
// (`sentences`), each cut to max_len tokens, and privatizes both with
// env's mechanism (streams of their own).
func newAttackPairs(ctx context.Context, v spec.Values, env Env) (*attackPairs, error) {
	if len(env.Texts) == 0 {
		return nil, fmt.Errorf("needs the dataset's texts")
	}
	p := &attackPairs{emb: env.Space.Emb}
	maxLen := v.Int("max_len")
	var pool []int
	for i, d := range env.Texts {
		if len(d) > 0 {
			pool = append(pool, i)
		}
	}
	nTest, nTrain := v.Int("test"), v.Int("sentences")
	if len(pool) < nTest+nTrain {
		return nil, fmt.Errorf("%d texts for %d evaluated and %d training sentences", len(pool), nTest, nTrain)
	}
	picked := sample(pool, nTest+nTrain, env.Seed)
	cut := func(idx []int) [][]string {
		docs := make([][]string, len(idx))
		for i, j := range idx {
			docs[i] = env.Texts[j][:min(len(env.Texts[j]), maxLen)]
		}
		return docs
	}
	p.testDocs, p.trainDocs = cut(picked[:nTest]), cut(picked[nTest:])
	privatize := func(docs [][]string, split string) ([][]string, error) {
		src := env.Source
		src.Split = split
		out, _, err := env.Mech.Privatize(ctx, docs, src)
		return out, err
	}
	var err error
	if p.trainPriv, err = privatize(p.trainDocs, "attack-train"); err != nil {
		return nil, err
	}
	if p.testPriv, err = privatize(p.testDocs, "attack-test"); err != nil {
		return nil, err
	}
	p.lookups = int64(tokens(p.trainDocs) + tokens(p.testDocs))

	// The attacker's vocabulary: its training text's most frequent
	// original words with a vector (ties by the word).
	p.freq = map[string]int{}
	for _, d := range p.trainDocs {
		for _, w := range d {
			if _, ok := p.emb.Index(w); ok {
				p.freq[w]++
			}
		}
	}
	p.words = make([]string, 0, len(p.freq))
	for w := range p.freq {
		p.words = append(p.words, w)
	}
	slices.SortFunc(p.words, func(x, y string) int { return cmp.Or(cmp.Compare(p.freq[y], p.freq[x]), cmp.Compare(x, y)) })
	p.words = p.words[:min(len(p.words), v.Int("vocab"))]
	p.class = make(map[string]int64, len(p.words))
	for i, w := range p.words {
		p.class[w] = int64(firstWord + i)
	}
	p.trainTags = make([][]int64, len(p.trainDocs))
	p.mapCounts = map[string]map[int64]int{}
	for i, d := range p.trainDocs {
		p.trainTags[i] = make([]int64, len(d))
		for j, w := range d {
			t := p.tag(w, p.trainPriv[i][j])
			p.trainTags[i][j] = t
			if p.mapCounts[p.trainPriv[i][j]] == nil {
				p.mapCounts[p.trainPriv[i][j]] = map[int64]int{}
			}
			p.mapCounts[p.trainPriv[i][j]][t]++
		}
	}
	return p, nil
}

// tag is the attacker's label of an original word observed as priv.
func (p *attackPairs) tag(orig, priv string) int64 {
	switch c, ok := p.class[orig]; {
	case orig == priv:
		return tagCopy
	case ok:
		return c
	}
	return tagOther
}

// right reports whether tag t names orig, observed as priv.
func (p *attackPairs) right(t int64, orig, priv string) bool {
	if t == tagCopy {
		return orig == priv
	}
	return t >= firstWord && p.words[t-firstWord] == orig
}

// ids are the attacker's inputs: row+1 for a word with a vector, n+1 for
// one without, 0 pad.
func (p *attackPairs) ids(docs [][]string) [][]int64 {
	n := p.emb.Len()
	out := make([][]int64, len(docs))
	for i, d := range docs {
		out[i] = make([]int64, len(d))
		for j, w := range d {
			out[i][j] = int64(n + 1)
			if r, ok := p.emb.Index(w); ok {
				out[i][j] = int64(r + 1)
			}
		}
	}
	return out
}

// counts are a reconstruction's tallies over the evaluated tokens with
// a vector.
type counts struct {
	all, rare, same, ctxAll, ctxRare, freeAll, freeRare, reachable int
}

func (counts) pct(x, of int) float64 { return 100 * float64(x) / float64(max(of, 1)) }

// score tallies the evaluated tokens with a vector: the context-free
// attacker's tag of each (the observed word's most frequent tag in the
// training pairs, copy for a word never observed; ties to the smaller
// tag) and, when pred is not nil, the context-aware attacker's tag of
// token j of text i.
func (p *attackPairs) score(rareAt int, pred func(i, j int) int64) counts {
	var c counts
	for i, d := range p.testDocs {
		for j, w := range d {
			if _, ok := p.emb.Index(w); !ok {
				continue
			}
			o := p.testPriv[i][j]
			isRare := p.freq[w] <= rareAt
			c.all++
			if isRare {
				c.rare++
			}
			if w == o {
				c.same++
			}
			if _, ok := p.class[w]; ok || w == o {
				c.reachable++
			}
			free := int64(tagCopy)
			if m := p.mapCounts[o]; m != nil {
				best := -1
				for t, k := range m {
					if k > best || k == best && t < free {
						free, best = t, k
					}
				}
			}
			if pred != nil && p.right(pred(i, j), w, o) {
				c.ctxAll++
				if isRare {
					c.ctxRare++
				}
			}
			if p.right(free, w, o) {
				c.freeAll++
				if isRare {
					c.freeRare++
				}
			}
		}
	}
	return c
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
		m, err := models.NewTagger(cfg, env.device())
		if err != nil {
			return err
		}
		defer m.Close()
		opt := models.TagOptions{Epochs: v.Int("epochs"), Batch: batch, Seed: env.Seed, Stream: 0x61747461636b, Device: env.device()} // "attack"
		if err := models.TrainTagger(ctx, m, trainIDs, trainTags, opt); err != nil {
			return err
		}
		pred, err = models.PredictTags(m, testIDs, env.device())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("attacker: %w", torchrt.Clean(err))
	}
	return pred, nil
}

// reconstructionKind registers the reconstruction analysis (kind).
var reconstructionKind = kind{name: "reconstruction", run: reconstruct,
	plan: func(v spec.Values, env Env) (Work, error) {
		return Work{Rows: v.Int("sentences") + v.Int("test"), Draws: 1}, nil
	}}
