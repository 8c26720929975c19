package models

import (
	"context"
	"math"
	"testing"

	"github.com/xp-nlp/xp/torchrt"
)

func TestSmokeLearns(t *testing.T) {
	res, err := TrainSmoke(context.Background(), DefaultSmoke())
	if err != nil {
		t.Fatal(err)
	}
	first, last := res.Losses[0], mean(res.Losses[len(res.Losses)-5:])
	t.Logf("loss %.4f -> %.4f over %d steps, training accuracy %.3f", first, last, len(res.Losses), res.Accuracy)
	if first < 0.6 {
		t.Errorf("first loss %.4f: an untrained binary classifier should start near ln 2", first)
	}
	if last > 0.15 {
		t.Errorf("mean loss of the last 5 steps %.4f > 0.15: the binding does not learn", last)
	}
	if res.Accuracy < 0.95 {
		t.Errorf("training accuracy %.3f < 0.95", res.Accuracy)
	}
}

// On the CPU, the same seed must give bit-identical losses, also with
// several intra-op threads; another seed must not.
func TestSmokeDeterministic(t *testing.T) {
	old := torchrt.Threads()
	defer torchrt.SetThreads(old)
	if err := torchrt.SetThreads(2); err != nil {
		t.Fatal(err)
	}
	c := DefaultSmoke()
	c.Steps = 25
	a, err := TrainSmoke(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := TrainSmoke(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Losses {
		if math.Float64bits(a.Losses[i]) != math.Float64bits(b.Losses[i]) {
			t.Fatalf("step %d: loss %.17g then %.17g with the same seed", i, a.Losses[i], b.Losses[i])
		}
	}
	c.Seed = 2
	d, err := TrainSmoke(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(a.Losses[0]) == math.Float64bits(d.Losses[0]) {
		t.Errorf("seeds 1 and 2 gave the same first loss %.17g", a.Losses[0])
	}
}

func TestSmokeCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := TrainSmoke(ctx, DefaultSmoke()); err != context.Canceled {
		t.Errorf("TrainSmoke on a cancelled context: %v", err)
	}
}

func TestNewBiLSTMRejectsBadConfig(t *testing.T) {
	for _, c := range []BiLSTMConfig{
		{Vocab: 0, EmbedDim: 4, Hidden: 4, Layers: 1, Classes: 2, LR: 0.1},
		{Vocab: 10, EmbedDim: 4, Hidden: 4, Layers: 1, Classes: 1, LR: 0.1},
		{Vocab: 10, EmbedDim: 4, Hidden: 4, Layers: 1, Classes: 2, LR: 0},
		{Vocab: 10, EmbedDim: 4, Hidden: 4, Layers: 1, Classes: 2, LR: 0.1, Dropout: 1},
	} {
		if _, err := NewBiLSTM(c, DefaultSmoke().Device); err == nil {
			t.Errorf("NewBiLSTM(%+v): no error", c)
		}
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
