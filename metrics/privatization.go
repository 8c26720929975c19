package metrics

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/xp-nlp/xp/spec"
)

// Privatization reports what privatizing one split did. Every token is in
// exactly one of three groups: out of vocabulary (no vector: passed
// through unchanged under the OOV policy "keep"), a stopword kept by the
// mechanism's rule (CusText+), or in vocabulary (given to the mechanism,
// which may return it unchanged).
type Privatization struct {
	Mechanism  string      `json:"mechanism"`
	Notion     spec.Notion `json:"notion"`
	Epsilon    float64     `json:"epsilon"`
	Candidates string      `json:"candidates"` // the candidate vocabulary
	// CandidateCount is how many words the mechanism may output: the
	// embedding's, or fewer where its candidate set is restricted
	// (SanText over the task vocabulary, SanText+'s sensitive words).
	CandidateCount int    `json:"candidate_count,omitempty"`
	OOVPolicy      string `json:"oov_policy"`
	Tokens         int64  `json:"tokens"`
	OOV            int64  `json:"oov"`                      // tokens without a vector, passed through
	Stopwords      int64  `json:"kept_stopwords,omitempty"` // tokens kept by the mechanism's stopword rule
	Unchanged      int64  `json:"unchanged"`                // in-vocabulary tokens whose output equals the input
	Fallbacks      int64  `json:"knn_fallbacks"`
	RNG            string `json:"rng"`
	// Types are the distinct words with a vector in the split's text;
	// TypeUnchanged sums, over them, the share of each word's
	// occurrences left unchanged (see TypeUnchangedRate).
	Types         int64   `json:"types,omitempty"`
	TypeUnchanged float64 `json:"type_unchanged_sum,omitempty"`
}

// TypeUnchangedRate is the per-word-type unchanged rate observed in the
// text: the mean over the distinct in-vocabulary words of the share of
// each word's occurrences returned unchanged (NaN when not measured). A
// frequent word kept often weighs as much as a rare one.
func (p Privatization) TypeUnchangedRate() float64 {
	if p.Types == 0 {
		return math.NaN()
	}
	return p.TypeUnchanged / float64(p.Types)
}

// CountTypes measures Types and TypeUnchanged from a text and its
// privatized copy (aligned token by token); inVocab says which words the
// mechanism was given.
func (p *Privatization) CountTypes(orig, priv [][]string, inVocab func(string) bool) {
	type count struct{ n, same int }
	byType := map[string]*count{}
	var order []*count // first-seen order: the sum below is the same bits every run
	for i, d := range orig {
		for j, w := range d {
			if !inVocab(w) {
				continue
			}
			c := byType[w]
			if c == nil {
				c = &count{}
				byType[w] = c
				order = append(order, c)
			}
			c.n++
			if priv[i][j] == w {
				c.same++
			}
		}
	}
	p.Types, p.TypeUnchanged = int64(len(order)), 0
	for _, c := range order {
		p.TypeUnchanged += float64(c.same) / float64(c.n)
	}
}

// InVocab is the number of tokens given to the mechanism: those with a
// vector that no stopword rule kept.
func (p Privatization) InVocab() int64 { return p.Tokens - p.OOV - p.Stopwords }

// WithVector is the number of tokens with a vector: those given to the
// mechanism and those a stopword rule kept.
func (p Privatization) WithVector() int64 { return p.Tokens - p.OOV }

// UnchangedShare is xp's one definition of "unchanged": the share of the
// tokens with a vector returned as they were, whatever the reason —
// drawn unchanged by the mechanism, or kept by a stopword rule without a
// guarantee (KeptShare says how many of them) — NaN when there were
// none. Tables, plots, long.csv and the reconstruction attack's
// "unchanged %" all report it; tokens without a vector are counted apart
// (OOVShare).
func (p Privatization) UnchangedShare() float64 {
	return ratio(p.Unchanged+p.Stopwords, p.WithVector())
}

// KeptShare is the share of the tokens with a vector that a stopword rule
// kept as they were (CusText+, 1-Diffractor): unchanged, with no
// guarantee (NaN when there were none).
func (p Privatization) KeptShare() float64 { return ratio(p.Stopwords, p.WithVector()) }

// OOVShare is the share of all tokens that had no vector (NaN for no tokens).
func (p Privatization) OOVShare() float64 { return ratio(p.OOV, p.Tokens) }

// OriginalProportion is the share of all tokens that are the same after
// privatization, whatever the reason (CusText's Table 6 measure).
func (p Privatization) OriginalProportion() float64 {
	return ratio(p.Unchanged+p.OOV+p.Stopwords, p.Tokens)
}

// Add sums the counts of q into p (a cell's privatized splits together).
func (p *Privatization) Add(q Privatization) {
	p.Tokens += q.Tokens
	p.OOV += q.OOV
	p.Stopwords += q.Stopwords
	p.Unchanged += q.Unchanged
	p.Fallbacks += q.Fallbacks
	p.Types += q.Types
	p.TypeUnchanged += q.TypeUnchanged
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// DefaultMaxOOV is the share of out-of-vocabulary tokens above which a
// privatized split is flagged: so much text passes through unprotected
// that the cell mostly measures the unprivatized text.
const DefaultMaxOOV = 0.2

// Flag is a warning about one privatized split of a cell.
type Flag struct {
	Split string  `json:"split"`
	Kind  string  `json:"kind"`  // "oov", "unchanged" or "kept"
	Share float64 `json:"share"` // the OOV share (oov), the kept share (kept)
	Limit float64 `json:"limit"` // the threshold it is above (oov)
	Eps   float64 `json:"epsilon"`
}

// Short is the flag for a table cell.
func (f Flag) Short() string {
	switch f.Kind {
	case "oov":
		return fmt.Sprintf("%s %.0f%% OOV", f.Split, 100*f.Share)
	case "kept":
		return fmt.Sprintf("%s %.0f%% kept unguarded", f.Split, 100*f.Share)
	}
	return f.Split + " unchanged"
}

func (f Flag) String() string {
	switch f.Kind {
	case "oov":
		return fmt.Sprintf("%s: %.1f%% of tokens out of vocabulary (above %.0f%%) passed through unprivatized", f.Split, 100*f.Share, 100*f.Limit)
	case "kept":
		return fmt.Sprintf("%s: %.1f%% of the tokens with a vector kept as they were by a stopword rule, with no guarantee (counted as unchanged)", f.Split, 100*f.Share)
	}
	return fmt.Sprintf("%s: privatization at ε = %g changed no in-vocabulary token", f.Split, f.Eps)
}

// Flags are the warnings a cell's privatized splits raise, by split: an
// out-of-vocabulary share above maxOOV (so much text passes through
// unprotected that the cell mostly measures unprivatized text), and a
// privatization that changed no in-vocabulary token (legitimate at a
// very large ε or with rank 1, hence a warning and not an error), and
// tokens kept by a stopword rule, which carry no guarantee.
func Flags(reports map[string]Privatization, maxOOV float64) []Flag {
	var out []Flag
	for _, split := range slices.Sorted(maps.Keys(reports)) {
		r := reports[split]
		if s := r.OOVShare(); s > maxOOV {
			out = append(out, Flag{Split: split, Kind: "oov", Share: s, Limit: maxOOV, Eps: r.Epsilon})
		}
		if r.InVocab() > 0 && r.Unchanged == r.InVocab() {
			out = append(out, Flag{Split: split, Kind: "unchanged", Eps: r.Epsilon})
		}
		if r.Stopwords > 0 {
			out = append(out, Flag{Split: split, Kind: "kept", Share: r.KeptShare(), Eps: r.Epsilon})
		}
	}
	return out
}
