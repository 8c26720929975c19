// Package mechtest builds the small embeddings and candidate spaces that
// tests of the packages above mech privatize over: words with given
// coordinates, words on a line, Gaussian words. mech's own tests cannot
// import it (it imports mech); they build their spaces in mech/mech_test.go.
package mechtest

import (
	"strconv"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/mech"
)

// Embedding is the named words with rows data (len(words) × dim values).
func Embedding(dim int, words []string, data []float32) *embedding.Embedding {
	return &embedding.Embedding{Dim: dim, Format: "test", Source: "mechtest", Words: words, Data: data}
}

// Line is one word per coordinate on a line (1-d vectors), named w0, w1, …
func Line(xs ...float32) *embedding.Embedding {
	e := Embedding(1, nil, nil)
	for i, x := range xs {
		e.Words = append(e.Words, "w"+strconv.Itoa(i))
		e.Data = append(e.Data, x)
	}
	return e
}

// Space indexes e on the CPU, closed when the test ends.
func Space(t testing.TB, e *embedding.Embedding) *mech.Space {
	t.Helper()
	s, err := mech.NewSpace(e, gotch.CPU, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}
