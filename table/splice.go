package table

import (
	"bytes"
	"fmt"
	"regexp"
)

// blockRE matches a generated block of a Markdown document: an opening
// marker "<!-- xp:KIND ARG -->", anything, and a closing marker.
var blockRE = regexp.MustCompile(`(?s)(<!-- xp:([a-z]+) ([^ ]+) -->\n)(.*?)(<!-- /xp:([a-z]+) -->)`)

// Splice replaces the content of every block "<!-- xp:KIND ARG -->\n" …
// "<!-- /xp:KIND -->" of doc with gen[KIND](ARG) — kind results: a run
// folder's tables; kind agreement: a claims file's agreement table — and
// returns the document, the number of blocks, and the problems of those
// left as they were (an unknown kind, mismatched markers, or a generator
// that failed).
func Splice(doc []byte, gen map[string]func(arg string) (string, error)) ([]byte, int, []error) {
	var problems []error
	n := 0
	out := blockRE.ReplaceAllFunc(doc, func(block []byte) []byte {
		n++
		m := blockRE.FindSubmatch(block)
		kind, arg := string(m[2]), string(m[3])
		f, ok := gen[kind]
		switch {
		case string(m[6]) != kind:
			problems = append(problems, fmt.Errorf("block xp:%s %s closes as xp:%s", kind, arg, m[6]))
			return block
		case !ok:
			problems = append(problems, fmt.Errorf("block xp:%s %s: unknown kind", kind, arg))
			return block
		}
		t, err := f(arg)
		if err != nil {
			problems = append(problems, fmt.Errorf("block %s: %w", arg, err))
			return block
		}
		var b bytes.Buffer
		b.Write(m[1])
		b.WriteString(t)
		if t != "" && t[len(t)-1] != '\n' {
			b.WriteByte('\n')
		}
		b.Write(m[5])
		return b.Bytes()
	})
	return out, n, problems
}
