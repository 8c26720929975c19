package results

import (
	"bytes"
	"fmt"
	"regexp"
)

// blockRE matches a generated block of a Markdown document: an opening
// marker naming a run folder, anything, and the closing marker.
var blockRE = regexp.MustCompile(`(?s)(<!-- xp:results ([^ ]+) -->\n)(.*?)(<!-- /xp:results -->)`)

// Splice replaces the content of every block "<!-- xp:results RUN -->\n"
// … "<!-- /xp:results -->" of doc with table(RUN) (fenced as it is
// given), and returns the document, the number of blocks, and the
// problems of those left as they were (table failed).
func Splice(doc []byte, table func(run string) (string, error)) ([]byte, int, []error) {
	var problems []error
	n := 0
	out := blockRE.ReplaceAllFunc(doc, func(block []byte) []byte {
		n++
		m := blockRE.FindSubmatch(block)
		run := string(m[2])
		t, err := table(run)
		if err != nil {
			problems = append(problems, fmt.Errorf("block %s: %w", run, err))
			return block
		}
		var b bytes.Buffer
		b.Write(m[1])
		b.WriteString(t)
		if t != "" && t[len(t)-1] != '\n' {
			b.WriteByte('\n')
		}
		b.Write(m[4])
		return b.Bytes()
	})
	return out, n, problems
}
