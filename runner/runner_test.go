package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/results"
)

func TestRunCachesAndResumes(t *testing.T) {
	dir := t.TempDir()
	path, err := fixture.Write(dir, fixture.Options{Train: 60, Test: 20, Epochs: 2, Epsilon: []float64{1, 50}, Seeds: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	load := func(sets ...string) *experiments.Config {
		c, err := experiments.Load(path, experiments.Options{Set: sets})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := context.Background()
	first, err := Run(ctx, load(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 2 baseline cells + 2 ε × 2 modes × 2 seeds.
	if len(first.Cells) != 10 || first.Ran != 10 || first.Reused != 0 || first.Failed != 0 {
		t.Fatalf("first run: %d cells, %d ran, %d reused, %d failed", len(first.Cells), first.Ran, first.Reused, first.Failed)
	}
	store, err := results.OpenStore(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := store.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 10 {
		t.Fatalf("%d records, want 10", len(recs))
	}
	for _, r := range recs {
		if r.Status != "ok" || r.Test.Accuracy < 0 || r.Test.Accuracy > 1 || r.Test.N != 40 {
			t.Errorf("record %s: %+v", r.Cell, r.Test)
		}
		if r.Provenance.RNG == "" || r.Provenance.Inputs.Data == "" || r.Provenance.ConfigSHA256 == "" || r.Provenance.PeakRSSBytes == 0 {
			t.Errorf("record %s: provenance incomplete: %+v", r.Cell, r.Provenance)
		}
		if r.Cell.Mode != "none" && len(r.Privacy) == 0 {
			t.Errorf("record %s: no privacy report", r.Cell)
		}
	}
	rows := results.Table(recs, results.TableOptions{MaxOOV: metrics.DefaultMaxOOV})
	if rows[0].Setting != "none" || rows[0].Seeds != 2 || len(rows) != 5 {
		t.Errorf("table: %+v", rows)
	}
	for _, f := range []string{"manifest.json", "config.yaml", "tables/results.csv", "tables/results.md", "plots/accuracy.png", "plots/accuracy.svg", "plots/privacy.png", "plots/privacy.svg"} {
		if st, err := os.Stat(filepath.Join(dir, "out", f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}

	// Same config: all served from the records.
	second, err := Run(ctx, load(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if second.Reused != 10 || second.Ran != 0 {
		t.Errorf("second run: %d reused, %d ran", second.Reused, second.Ran)
	}
	again, _ := store.All()
	for i := range recs {
		if again[i].Provenance.Started != recs[i].Provenance.Started || again[i].Test.Accuracy != recs[i].Test.Accuracy {
			t.Errorf("record %s rewritten", recs[i].Cell)
		}
	}

	// A new ε runs only its own cells (2 modes × 2 seeds); the baseline
	// and the ε = 1 and 50 cells are reused.
	third, err := Run(ctx, load("mechanisms.0.epsilon=[1, 50, 200]"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if third.Reused != 10 || third.Ran != 4 {
		t.Errorf("adding an ε: %d reused, %d ran (want 10, 4)", third.Reused, third.Ran)
	}
	// Changing the number of epochs changes every key.
	fourth, err := Run(ctx, load("train.epochs=1", "mechanisms.0.epsilon=[1]", "seeds=[1]"), Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if fourth.Reused != 0 || len(fourth.Cells) != 3 {
		t.Errorf("changed training: %d of %d cells cached", fourth.Reused, len(fourth.Cells))
	}
}

// TestRunIsReproducible: the same config and seed give bit-identical
// metrics in two fresh output folders (the corpus cache is also fresh).
func TestRunIsReproducible(t *testing.T) {
	var accs [2][]float64
	for i := range accs {
		dir := t.TempDir()
		path, err := fixture.Write(dir, fixture.Options{Train: 40, Test: 20, Epochs: 2, Epsilon: []float64{5}, Seeds: []int{3}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := experiments.Load(path, experiments.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(context.Background(), c, Options{}); err != nil {
			t.Fatal(err)
		}
		store, _ := results.OpenStore(c.Output)
		recs, _ := store.All()
		for _, r := range recs {
			accs[i] = append(accs[i], r.Test.Accuracy, r.Valid.Accuracy, r.Epochs[len(r.Epochs)-1].Loss)
		}
	}
	if len(accs[0]) != 9 || !equal(accs[0], accs[1]) {
		t.Errorf("two runs of one config: %v vs %v", accs[0], accs[1])
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRunReportsMissingFiles(t *testing.T) {
	dir := t.TempDir()
	path, err := fixture.Write(dir, fixture.Options{Train: 5, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := experiments.Load(path, experiments.Options{Set: []string{"embedding.path=missing.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), c, Options{})
	if err == nil || !strings.Contains(err.Error(), "missing.txt") || !strings.Contains(err.Error(), "xp.yaml") {
		t.Errorf("missing embedding: %v", err)
	}
}
