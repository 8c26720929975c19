package embedding

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Embedding is a matrix of word vectors: row i of Data (Dim float32s) is
// the vector of Words[i]. Rows keep the file's order, which for every
// common release is decreasing frequency.
type Embedding struct {
	Words []string
	Dim   int
	Data  []float32 // len(Words)*Dim, row-major

	Source       string // the file read
	SourceSHA256 string // sha256 of the file's bytes as stored (compressed if it is)
	Format       string // glove, vec or word2vec-binary
	Skipped      Skipped
	// Restriction records how the vocabulary was cut after loading ("" for
	// the whole file), e.g. "top 50000" or "word list (12345 of 13000, sha256 …)".
	Restriction string

	index map[string]int32
}

// Skipped counts rows left out by the rules in the package documentation.
type Skipped struct {
	Duplicates  int `json:"duplicates"`
	InvalidUTF8 int `json:"invalid_utf8"`
}

// Len is the number of words.
func (e *Embedding) Len() int { return len(e.Words) }

// Vector returns row i, aliasing Data.
func (e *Embedding) Vector(i int) []float32 { return e.Data[i*e.Dim : (i+1)*e.Dim : (i+1)*e.Dim] }

// Index returns the row of word w.
func (e *Embedding) Index(w string) (int, bool) {
	if e.index == nil {
		e.buildIndex()
	}
	i, ok := e.index[w]
	return int(i), ok
}

func (e *Embedding) buildIndex() {
	e.index = make(map[string]int32, len(e.Words))
	for i, w := range e.Words {
		e.index[w] = int32(i)
	}
}

// Top returns the first n rows (the n most frequent words in the usual
// releases). n ≥ Len returns e itself.
func (e *Embedding) Top(n int) *Embedding {
	if n <= 0 || n >= e.Len() {
		return e
	}
	out := e.derive(fmt.Sprintf("top %d", n))
	out.Words = e.Words[:n:n]
	out.Data = e.Data[: n*e.Dim : n*e.Dim]
	return out
}

// Restrict returns the rows of the words in list that the embedding has,
// in the embedding's order, and the number of listed words it lacks.
func (e *Embedding) Restrict(list []string) (*Embedding, int) {
	want := make(map[string]bool, len(list))
	for _, w := range list {
		want[w] = true
	}
	h := sha256.New()
	for _, w := range list {
		h.Write([]byte(w))
		h.Write([]byte{'\n'})
	}
	var keep []int
	for i, w := range e.Words {
		if want[w] {
			keep = append(keep, i)
		}
	}
	out := e.derive(fmt.Sprintf("word list (%d of %d words found, list sha256 %s)",
		len(keep), len(want), hex.EncodeToString(h.Sum(nil))[:16]))
	out.Words = make([]string, len(keep))
	out.Data = make([]float32, len(keep)*e.Dim)
	for j, i := range keep {
		out.Words[j] = e.Words[i]
		copy(out.Data[j*e.Dim:], e.Vector(i))
	}
	return out, len(want) - len(keep)
}

func (e *Embedding) derive(how string) *Embedding {
	out := *e
	out.index = nil
	out.Restriction = how
	if e.Restriction != "" {
		out.Restriction = e.Restriction + "; " + how
	}
	return &out
}

// String summarises the embedding for logs and provenance.
func (e *Embedding) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d × %d (%s", e.Source, e.Len(), e.Dim, e.Format)
	if e.Skipped.Duplicates+e.Skipped.InvalidUTF8 > 0 {
		fmt.Fprintf(&b, "; skipped %d duplicate, %d non-UTF-8", e.Skipped.Duplicates, e.Skipped.InvalidUTF8)
	}
	if e.Restriction != "" {
		fmt.Fprintf(&b, "; %s", e.Restriction)
	}
	b.WriteString(")")
	return b.String()
}
