package datasets

import (
	"fmt"
	"slices"
	"strings"
)

// labelUse gathers where a user's dataset carries each label: per label
// and split, how many examples and the first few of them (file:line, or
// a file's path).
type labelUse struct {
	splits []string // in the order they were read
	count  map[string]map[string]int
	first  map[string][]string
}

func newLabelUse(splits ...string) *labelUse {
	return &labelUse{splits: splits, count: map[string]map[string]int{}, first: map[string][]string{}}
}

// add notes that example id of split carries label.
func (u *labelUse) add(split, label, id string) {
	if u.count[label] == nil {
		u.count[label] = map[string]int{}
	}
	u.count[label][split]++
	if len(u.first[label]) < 3 {
		u.first[label] = append(u.first[label], id)
	}
}

// rows says where a label is carried: "12 rows: a.csv:4, a.csv:9, …".
func (u *labelUse) rows(label string) string {
	n := 0
	for _, c := range u.count[label] {
		n += c
	}
	s := fmt.Sprintf("%d example", n)
	if n != 1 {
		s += "s"
	}
	s += ": " + strings.Join(u.first[label], ", ")
	if n > len(u.first[label]) {
		s += ", …"
	}
	return s
}

// labels decides a user's dataset's label set (in label index order)
// from where the examples carry them. With pinned (dataset.labels), the
// set is pinned in its order, and a label outside it is an error naming
// its examples. Without, the set is the labels seen, sorted, and refused
// where a mistake is likely: two labels that differ only by case or
// spacing ("Pos" beside "pos": a typo that makes a phantom class), or,
// when the data came as several splits (a test file beside the training
// file), a label that some split never carries (a model cannot learn a
// class it never sees, nor be tested on one the test split lacks). Either
// is accepted on purpose by pinning the set.
func (u *labelUse) labels(source string, pinned []string) ([]string, error) {
	seen := sortedKeys(u.count)
	if len(pinned) > 0 {
		for _, l := range seen {
			if !slices.Contains(pinned, l) {
				return nil, fmt.Errorf("%s: label %q (%s) is not one of dataset.labels [%s]", source, l, u.rows(l), strings.Join(pinned, ", "))
			}
		}
		return pinned, nil
	}
	if len(seen) < 2 {
		return nil, fmt.Errorf("%s: %d distinct labels %q; a classification task needs at least 2", source, len(seen), seen)
	}
	folded := map[string]string{}
	for _, l := range seen {
		f := strings.ToLower(strings.Join(strings.Fields(l), " "))
		if other, ok := folded[f]; ok {
			return nil, fmt.Errorf("%s: labels %q (%s) and %q (%s) differ only by case or spacing: correct the examples, or pin the label set with dataset.labels: [%s] to keep both as classes",
				source, other, u.rows(other), l, u.rows(l), strings.Join(seen, ", "))
		}
		folded[f] = l
	}
	if len(u.splits) > 1 {
		for _, l := range seen {
			for _, s := range u.splits {
				if u.count[l][s] == 0 {
					return nil, fmt.Errorf("%s: label %q is carried by %s, and by no example of split %s: correct the data, or pin the label set with dataset.labels: [%s] to accept it",
						source, l, u.rows(l), s, strings.Join(seen, ", "))
				}
			}
		}
	}
	return seen, nil
}
