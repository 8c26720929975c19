package runner

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
)

// TestTrainingLogged: a run's log says, for each model it trains, each
// epoch's loss and validation accuracy, named by the model's key: the
// heartbeat of a log that no progress bar is drawn in (a Slurm task's),
// where an epoch can take hours. Before, the log was silent from a
// training's start to its model's "trained in".
func TestTrainingLogged(t *testing.T) {
	dir := t.TempDir()
	path, err := fixture.Write(dir, fixture.Options{Train: 40, Test: 10, Epochs: 2, Epsilon: []float64{5}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := experiments.Load(path, experiments.Options{Set: []string{"apply=[train]", "mechanisms=[]", "apply=[none]"}})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if _, err := Run(context.Background(), c, Options{Log: &log}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`model [0-9a-f]+: epoch 1: loss [0-9.]+, valid accuracy`, `model [0-9a-f]+: epoch 2: loss`, `model [0-9a-f]+ trained in`} {
		if !regexp.MustCompile(want).MatchString(log.String()) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}
