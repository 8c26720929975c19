package datasets

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/xp-nlp/xp/internal/rng"
)

// Example is one labelled (or unlabelled) item of a corpus: a text, or a
// pair of texts for sentence-pair tasks such as QNLI.
type Example struct {
	// ID identifies the example within its dataset and never depends on
	// load order or options: a file path inside the corpus, or
	// "file:row". Seeded splits hash it.
	ID    string
	Text  string
	Text2 string // the second text of a pair; "" for single-text tasks
	// Label indexes Dataset.Labels; Unlabelled for test files published
	// without labels.
	Label int
	// Rating is the review's star rating where the corpus has one (IMDb),
	// else 0.
	Rating int
}

// Unlabelled is the Label of an example whose label is not published.
const Unlabelled = -1

// Dataset is a labelled corpus with named splits ("train", "dev", "test",
// and those carved from them such as "valid").
type Dataset struct {
	Name   string
	Labels []string // label names; Example.Label indexes this
	Pair   bool     // examples are text pairs
	// WordLevel: each example's text is one word (an entry of a lexicon),
	// a token as it stands.
	WordLevel bool
	Source    string // the file or folder it was read from
	Splits    map[string][]Example
}

// Split returns the examples of the named split.
func (d *Dataset) Split(name string) ([]Example, error) {
	ex, ok := d.Splits[name]
	if !ok {
		return nil, fmt.Errorf("dataset %s has no split %q (has %v)", d.Name, name, d.SplitNames())
	}
	return ex, nil
}

// SplitNames returns the split names in a fixed order: train, valid, dev,
// test, then the rest alphabetically.
func (d *Dataset) SplitNames() []string {
	rank := map[string]int{"train": 0, "valid": 1, "dev": 2, "test": 3}
	names := make([]string, 0, len(d.Splits))
	for n := range d.Splits {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, oki := rank[names[i]]
		rj, okj := rank[names[j]]
		switch {
		case oki && okj:
			return ri < rj
		case oki != okj:
			return oki
		}
		return names[i] < names[j]
	})
	return names
}

// Labelled reports whether every example of the split has a label.
func (d *Dataset) Labelled(split string) bool {
	for _, e := range d.Splits[split] {
		if e.Label == Unlabelled {
			return false
		}
	}
	return len(d.Splits[split]) > 0
}

// LabelCounts returns the number of examples of each label in a split,
// indexed like Labels; unlabelled examples are not counted.
func (d *Dataset) LabelCounts(split string) []int {
	counts := make([]int, len(d.Labels))
	for _, e := range d.Splits[split] {
		if e.Label >= 0 && e.Label < len(counts) {
			counts[e.Label]++
		}
	}
	return counts
}

// Carve moves a seeded, label-stratified fraction of split from into a new
// split to (for example 10% of "train" into "valid" for early stopping,
// or into "test" where a paper splits 90/10).
//
// Which examples move depends only on seed, the split names and each
// example's ID and label: never on load order, on other splits or on any
// other option, so adding an ε or a mechanism to a sweep cannot change a
// split. Per label, round(fraction × count) examples move: those whose
// hash of (seed, to, ID) is smallest.
func (d *Dataset) Carve(from, to string, fraction float64, seed uint64) error {
	if !(fraction > 0 && fraction < 1) {
		return fmt.Errorf("carve %s from %s: fraction %v not in (0, 1)", to, from, fraction)
	}
	src, err := d.Split(from)
	if err != nil {
		return fmt.Errorf("carve %s: %w", to, err)
	}
	if _, dup := d.Splits[to]; dup {
		return fmt.Errorf("carve %s from %s: split %s exists", to, from, to)
	}
	keep, held := HoldOut(src, fraction, seed, to)
	d.Splits[from], d.Splits[to] = keep, held
	return nil
}

// HoldOut splits examples into kept and held-out parts as Carve does;
// salt separates independent hold-outs drawn with one seed. Both parts
// keep the input order.
func HoldOut(examples []Example, fraction float64, seed uint64, salt string) (kept, held []Example) {
	type keyed struct {
		h uint64
		i int
	}
	byLabel := map[int][]keyed{}
	for i, e := range examples {
		byLabel[e.Label] = append(byLabel[e.Label], keyed{splitHash(seed, salt, e.ID), i})
	}
	out := make([]bool, len(examples))
	for _, ks := range byLabel {
		slices.SortFunc(ks, func(a, b keyed) int {
			if c := cmp.Compare(a.h, b.h); c != 0 {
				return c
			}
			return cmp.Compare(examples[a.i].ID, examples[b.i].ID)
		})
		n := int(math.Round(fraction * float64(len(ks))))
		for _, k := range ks[:n] {
			out[k.i] = true
		}
	}
	for i, e := range examples {
		if out[i] {
			held = append(held, e)
		} else {
			kept = append(kept, e)
		}
	}
	return kept, held
}

func splitHash(seed uint64, salt, id string) uint64 { return rng.Hash(seed, salt, id) }

// Sample keeps n of the examples, chosen by seed and salt alone: those
// whose hash of (seed, salt, ID) is smallest (ties by ID), in their input
// order. All are kept when n ≤ 0 or n ≥ len(examples). Like Carve, the
// choice never depends on load order or on other splits, so growing n
// keeps every example a smaller n chose.
func Sample(examples []Example, n int, seed uint64, salt string) []Example {
	if n <= 0 || n >= len(examples) {
		return examples
	}
	type keyed struct {
		h uint64
		i int
	}
	ks := make([]keyed, len(examples))
	for i, e := range examples {
		ks[i] = keyed{splitHash(seed, salt, e.ID), i}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(examples[a.i].ID, examples[b.i].ID))
	})
	idx := make([]int, n)
	for j, k := range ks[:n] {
		idx[j] = k.i
	}
	slices.Sort(idx)
	out := make([]Example, n)
	for j, i := range idx {
		out[j] = examples[i]
	}
	return out
}

// Merge replaces the named splits by one split holding all of their
// examples in the given order (for example to pool IMDb's train and test
// before a 90/10 split).
func (d *Dataset) Merge(to string, from ...string) error {
	var all []Example
	for _, f := range from {
		ex, err := d.Split(f)
		if err != nil {
			return fmt.Errorf("merge into %s: %w", to, err)
		}
		all = append(all, ex...)
	}
	for _, f := range from {
		delete(d.Splits, f)
	}
	d.Splits[to] = all
	return nil
}

// sortByID orders examples by ID (stable), so results do not depend on
// directory or archive order.
func sortByID(ex []Example) {
	slices.SortStableFunc(ex, func(a, b Example) int { return strings.Compare(a.ID, b.ID) })
}
