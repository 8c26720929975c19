package datasets

import (
	"cmp"
	"fmt"
	"slices"
)

// Vocab maps words to dense ids and keeps how often each was seen, so the
// empirical word distribution (the Bayesian adversary's prior) is at hand.
// Ids are ordered by decreasing count, ties by word, so a vocabulary built
// from the same tokens is the same whatever their order.
type Vocab struct {
	Words  []string // id → word
	Counts []int64  // id → occurrences in the counted text
	// Total is the number of counted tokens, including those of words
	// dropped by MinCount or MaxSize.
	Total int64
	index map[string]int32
}

// VocabOptions bound a vocabulary.
type VocabOptions struct {
	MinCount int64 // drop words seen fewer times; 0 or 1 keeps all
	MaxSize  int   // keep at most this many most frequent words; 0 keeps all
	// Reserved words take the first ids in this order whatever their
	// counts (for example a padding and an unknown-word token).
	Reserved []string
}

// Counter counts words for a vocabulary.
type Counter struct {
	counts map[string]int64
	total  int64
}

// NewCounter returns an empty counter.
func NewCounter() *Counter { return &Counter{counts: map[string]int64{}} }

// Add counts the tokens.
func (c *Counter) Add(tokens ...string) {
	for _, t := range tokens {
		c.counts[t]++
	}
	c.total += int64(len(tokens))
}

// Vocab builds the vocabulary of the counted words.
func (c *Counter) Vocab(opt VocabOptions) *Vocab {
	type wc struct {
		w string
		n int64
	}
	reserved := map[string]bool{}
	for _, r := range opt.Reserved {
		reserved[r] = true
	}
	var all []wc
	for w, n := range c.counts {
		if !reserved[w] && n >= opt.MinCount {
			all = append(all, wc{w, n})
		}
	}
	slices.SortFunc(all, func(a, b wc) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return cmp.Compare(a.w, b.w)
	})
	if opt.MaxSize > 0 && len(all) > opt.MaxSize-len(opt.Reserved) {
		all = all[:max(0, opt.MaxSize-len(opt.Reserved))]
	}
	v := &Vocab{Total: c.total, index: make(map[string]int32, len(all)+len(opt.Reserved))}
	for _, r := range opt.Reserved {
		v.add(r, c.counts[r])
	}
	for _, x := range all {
		v.add(x.w, x.n)
	}
	return v
}

func (v *Vocab) add(w string, n int64) {
	v.index[w] = int32(len(v.Words))
	v.Words = append(v.Words, w)
	v.Counts = append(v.Counts, n)
}

// NewVocab returns a vocabulary of the given words in the given order,
// with zero counts (for example an embedding's word list).
func NewVocab(words []string) (*Vocab, error) {
	v := &Vocab{index: make(map[string]int32, len(words))}
	for _, w := range words {
		if _, dup := v.index[w]; dup {
			return nil, fmt.Errorf("vocabulary: duplicate word %q", w)
		}
		v.add(w, 0)
	}
	return v, nil
}

// Len is the number of words.
func (v *Vocab) Len() int { return len(v.Words) }

// ID returns the id of w.
func (v *Vocab) ID(w string) (int32, bool) {
	id, ok := v.index[w]
	return id, ok
}

// IDs maps tokens to their ids, unk for a token outside the vocabulary.
func (v *Vocab) IDs(tokens []string, unk int64) []int64 {
	out := make([]int64, len(tokens))
	for i, w := range tokens {
		if id, ok := v.index[w]; ok {
			out[i] = int64(id)
		} else {
			out[i] = unk
		}
	}
	return out
}

// Freq returns the empirical probability of word id among all counted
// tokens (0 when nothing was counted).
func (v *Vocab) Freq(id int32) float64 {
	if v.Total == 0 {
		return 0
	}
	return float64(v.Counts[id]) / float64(v.Total)
}
