package mech_test

import (
	"context"
	"fmt"
	"log"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/mech"
)

// Privatizing text with multivariate Laplace at ε = 3 over four word
// vectors: each word with a vector is replaced by the candidate nearest
// to its vector plus noise; a word without one ("a", "film") passes
// through, counted as out of vocabulary. The seed and the cell's name fix
// every draw: the same call gives the same tokens on any machine and
// search path.
func ExampleNew() {
	vectors := &embedding.Embedding{Dim: 2, Words: []string{"bad", "poor", "good", "great"},
		Data: []float32{-1, 0, -0.9, 0.2, 0.9, 0.2, 1, 0}}
	space, err := mech.NewSpace(vectors, gotch.CPU, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer space.Close()
	m, err := mech.New("laplace", space, 3, nil, mech.Options{})
	if err != nil {
		log.Fatal(err)
	}
	texts := [][]string{{"a", "good", "film"}, {"great", "great", "bad"}}
	out, rep, err := m.Privatize(context.Background(), texts, mech.Source{Seed: 1, Cell: "example"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	fmt.Printf("%d tokens, %d without a vector, %d of the rest unchanged\n", rep.Tokens, rep.OOV, rep.Unchanged)
	// Output:
	// [[a good film] [good great bad]]
	// 6 tokens, 2 without a vector, 3 of the rest unchanged
}
