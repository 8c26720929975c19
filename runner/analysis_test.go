package runner

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/results"
)

// analysisConfig writes an analysis config over the fixture's corpus and
// vectors (40 words, 8 dimensions).
func analysisConfig(t *testing.T, body string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	if _, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 5, Epochs: 1, Epsilon: []float64{1}, Seeds: []int{1}}); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("name: a\ndata: %s\ndataset:\n  name: folder\n  path: corpus\nembedding:\n  path: vectors.txt\nthreads: 1\noutput: %s\ncache: %s\n%s",
		filepath.Join(dir, "data"), filepath.Join(dir, "out"), filepath.Join(dir, "cache"), body)
	path := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, filepath.Join(dir, "out")
}

func runConfig(t *testing.T, path string, sets ...string) Summary {
	t.Helper()
	c, err := experiments.Load(path, experiments.Options{Set: sets})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed > 0 {
		for _, cs := range sum.Cells {
			t.Errorf("%s: %s", cs.Cell, cs.Error)
		}
		t.FailNow()
	}
	return sum
}

// TestAnalysisRunAndReuse: analysis cells are recorded, reused by a
// second run, and reused when only the model section changes.
func TestAnalysisRunAndReuse(t *testing.T) {
	path, out := analysisConfig(t, `analysis:
  kind: plausible-deniability
  words: 10
  draws: 50
mechanisms:
  - name: laplace
    epsilon: [0.5, 50]
  - name: custext
    epsilon: [1]
    params: {k: 5}
seeds: [1, 2]
model:
  kind: bilstm
  hidden: 8
`)
	first := runConfig(t, path)
	if first.Ran != 6 || len(first.Stats) != 3 {
		t.Fatalf("first run: %d ran, %d table rows", first.Ran, len(first.Stats))
	}
	for _, r := range first.Stats {
		nw, _ := r.Stat("N_w mean")
		sw, _ := r.Stat("S_w mean")
		if r.Seeds != 2 || nw < 0 || nw > 50 || sw < 1 || sw > 50 {
			t.Errorf("%s ε=%v: N_w %v, S_w %v over %d seeds", r.Setting, r.Epsilon, nw, sw, r.Seeds)
		}
	}
	// Rows by setting, then ε: custext k=5, laplace 0.5, laplace 50.
	lo, _ := first.Stats[1].Stat("N_w mean")
	hi, _ := first.Stats[2].Stat("N_w mean")
	if !(lo < hi) {
		t.Errorf("Laplace N_w at ε=0.5 (%v) not below ε=50 (%v)", lo, hi)
	}
	again := runConfig(t, path, "model.hidden=16", "train.epochs=7")
	if again.Reused != 6 || again.Ran != 0 {
		t.Errorf("after editing the model: %d reused, %d ran", again.Reused, again.Ran)
	}
	if _, err := os.Stat(filepath.Join(out, "plots", "plausible-deniability.png")); err != nil {
		t.Error(err)
	}
}

// TestDeniabilityExactMatchesSampled: SanText's exact N_w and S_w (the
// expectations) agree with the sampled ones through its Privatize.
func TestDeniabilityExactMatchesSampled(t *testing.T) {
	path, _ := analysisConfig(t, `analysis:
  kind: plausible-deniability
  from: list
  list: [good1, bad3, good7]
  draws: 4000
mechanisms:
  - name: santext
    epsilon: [2]
`)
	stat := func(exact bool) (float64, float64) {
		sum := runConfig(t, path, fmt.Sprintf("analysis.exact=%v", exact))
		nw, _ := sum.Stats[0].Stat("N_w mean")
		sw, _ := sum.Stats[0].Stat("S_w mean")
		return nw, sw
	}
	enw, esw := stat(true)
	snw, ssw := stat(false)
	// N_w is a mean of 3 binomial counts of 4,000 draws: sd ≈ √(4000·p)/√3.
	if math.Abs(enw-snw) > 5*math.Sqrt(enw/3)+1 || math.Abs(esw-ssw) > 2 {
		t.Errorf("exact N_w %v S_w %v, sampled N_w %v S_w %v", enw, esw, snw, ssw)
	}
}

// TestBayesAdversary: E_M falls as ε grows and lies in [0, 1]; exact and
// sampled f_M agree for SanText.
func TestBayesAdversary(t *testing.T) {
	path, _ := analysisConfig(t, `analysis:
  kind: bayes-adversary
  samples: 3000
mechanisms:
  - name: laplace
    epsilon: [0.5, 200]
  - name: santext
    epsilon: [3]
`)
	sum := runConfig(t, path)
	em := map[string]float64{}
	for _, r := range sum.Stats {
		m, _ := r.Stat("E_M")
		if !(m >= 0 && m <= 1) {
			t.Errorf("%s ε=%v: E_M %v", r.Setting, r.Epsilon, m)
		}
		em[fmt.Sprintf("%s %v", r.Setting, r.Epsilon)] = m
	}
	if !(em["laplace 0.5"] > em["laplace 200"]+0.3) {
		t.Errorf("E_M: %v", em)
	}
	c, err := experiments.Load(path, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := results.OpenStore(c.Output)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := store.Records(sum.Keys())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Cell.Mechanism == "santext" && r.Analysis.Method != "exact" {
			t.Errorf("SanText's f_M: %s", r.Analysis.Method)
		}
		if r.Cell.Mechanism == "laplace" && r.Analysis.Stats[0].Lo == 0 {
			t.Errorf("sampled E_M without an interval: %+v", r.Analysis.Stats[0])
		}
	}
}
