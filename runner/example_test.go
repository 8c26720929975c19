package runner_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/runner"
)

// A whole sweep on the synthetic fixture (a two-class dataset and its
// vectors): the unprivatized baseline and Laplace at two ε, at training
// and at test time, one seed: five cells, three models (the test-time
// cells evaluate the baseline's). Run again, it computes nothing: every
// cell is served from its record.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "xp-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 10, Epochs: 1, Epsilon: []float64{1, 50}, Seeds: []int{1}})
	if err != nil {
		log.Fatal(err)
	}
	for range 2 {
		c, err := experiments.Load(path, experiments.Options{})
		if err != nil {
			log.Fatal(err)
		}
		sum, err := runner.Run(context.Background(), c, runner.Options{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d cells: %d ran, %d reused, %d models trained, %d failed; %d table rows\n",
			len(sum.Cells), sum.Ran, sum.Reused, sum.Trained, sum.Failed, len(sum.Rows))
	}
	// Output:
	// 5 cells: 5 ran, 0 reused, 3 models trained, 0 failed; 5 table rows
	// 5 cells: 0 ran, 5 reused, 0 models trained, 0 failed; 5 table rows
}
