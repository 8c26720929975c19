package models

import (
	"fmt"
	"math/rand/v2"
)

// Vectors is what EmbeddingMatrix needs of pre-trained word vectors
// (datasets/embedding.Embedding has it).
type Vectors interface {
	Index(word string) (int, bool)
	Vector(i int) []float32
}

// EmbeddingMatrix builds the initial embedding of a model vocabulary
// (words[i] is token id i) from pre-trained vectors of dimension dim: a
// word with a vector gets it; the padding id gets zeros; any other word
// gets values uniform in [−0.25, 0.25] (Kim 2014's convention, about the
// spread of word2vec's vectors) drawn from a PCG stream seeded by seed, so
// the matrix is reproducible. It returns the matrix and the number of
// words without a vector.
func EmbeddingMatrix(words []string, vec Vectors, dim int, pad int, seed uint64) ([]float32, int, error) {
	out := make([]float32, len(words)*dim)
	r := rand.New(rand.NewPCG(seed, 0xe3bedd))
	missing := 0
	for i, w := range words {
		row := out[i*dim : (i+1)*dim]
		if i == pad {
			continue
		}
		if j, ok := vec.Index(w); ok {
			v := vec.Vector(j)
			if len(v) != dim {
				return nil, 0, fmt.Errorf("embedding matrix: vector of %q has %d values, want %d", w, len(v), dim)
			}
			copy(row, v)
			continue
		}
		missing++
		for k := range row {
			row[k] = float32(r.Float64()*0.5 - 0.25)
		}
	}
	return out, missing, nil
}
