// Package near owns xp's "did you mean": which known names a mistyped
// one is close to, for keys and values alike.
package near

import (
	"fmt"
	"strings"
)

// Names are the known names closest to name, if within two edits (and
// fewer edits than name has characters), in the order given.
func Names(name string, known []string) []string {
	var out []string
	best := 3
	for _, k := range known {
		d := Distance(name, k)
		if d > 2 || d >= len([]rune(name)) || d > best {
			continue
		}
		if d < best {
			best, out = d, out[:0]
		}
		out = append(out, k)
	}
	return out
}

// DidYouMean is "; did you mean "x"?" for the known names near name, or
// "" when none is.
func DidYouMean(name string, known []string) string {
	n := Names(name, known)
	if len(n) == 0 {
		return ""
	}
	q := make([]string, len(n))
	for i, s := range n {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "; did you mean " + strings.Join(q, " or ") + "?"
}

// Distance is the Levenshtein distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
