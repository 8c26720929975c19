package runner

import (
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/experiments"
)

// TestAnalysisRateAtEpsilon: an analysis cell is priced at the rate its
// own setting measured at its ε when there is one, else at the setting's
// at another ε, else at the mechanism's at its ε. Before rates were kept
// per ε, a query-attack cell at ε = 1 was priced at whatever ε its setting
// last ran (2 s where it takes 106 s).
func TestAnalysisRateAtEpsilon(t *testing.T) {
	const shape = " on 100×8 float32"
	attack := func(k int, eps float64) experiments.Cell {
		return experiments.Cell{Analysis: "query-attack", Mechanism: "custext", Params: map[string]any{"k": k}, Epsilon: eps, Seed: 1}
	}
	// A calibration run, recorded as measuredBy reads it, in its order:
	// K = 20 at ε = 1 (slow), then at ε = 2 (fast).
	rates := map[string]rate{}
	for _, c := range []struct {
		cell   experiments.Cell
		perSec float64
	}{
		{attack(20, 1), 0.01},
		{attack(20, 2), 0.5},
	} {
		for _, k := range analysisRateKeys(c.cell, shape) {
			rates[k] = rate{PerSec: c.perSec}
		}
	}
	for _, c := range []struct {
		name string
		cell experiments.Cell
		want float64
	}{
		{"the setting at its ε", attack(20, 1), 0.01},
		{"the setting at its other ε", attack(20, 2), 0.5},
		{"the setting at an ε not measured", attack(20, 3), 0.5},
		{"another setting: the mechanism at the ε", attack(10, 1), 0.01},
		{"another setting at an ε not measured: the mechanism", attack(10, 8), 0.5},
	} {
		r, ok := firstRate(rates, analysisRateKeys(c.cell, shape))
		if !ok || r.PerSec != c.want {
			t.Errorf("%s: rate %v (found %v), want %v", c.name, r.PerSec, ok, c.want)
		}
	}
	if _, ok := firstRate(rates, analysisRateKeys(experiments.Cell{Analysis: "neighbours", Seed: 1}, shape)); ok {
		t.Error("an analysis never measured is priced")
	}
}

// TestSearchShapeNamesDevice: a GPU's search speed is kept apart from a
// CPU's even where both take the same scoring path (float32 products on a
// GPU and on a CPU without the kernels): the key names the device's kind.
// Fails if the CUDA shape equals the CPU's float32 one.
func TestSearchShapeNamesDevice(t *testing.T) {
	cuda := searchShape(44252, 300, gotch.CudaBuilder(0))
	if want := " on 44252×300 float32 (cuda)"; cuda != want {
		t.Errorf("cuda: %q, want %q", cuda, want)
	}
	if cpu := searchShape(44252, 300, gotch.CPU); cpu == cuda || strings.Contains(cpu, "cuda") {
		t.Errorf("cpu: %q", cpu)
	}
}

// TestTrainRateNamesDevice: a training speed measured on a GPU is kept
// apart from one on the CPU, as a search's is: a dry run on the CPU of a
// config whose cells were trained on a GPU of the same host priced its
// fine-tuning at the GPU's rate, a hundred times too fast. The CPU's key
// stays what it was, so the rates a host recorded still price its runs.
// Fails if the two keys are the same.
func TestTrainRateNamesDevice(t *testing.T) {
	c, err := experiments.Parse("t.yaml", []byte("name: t\ndataset: {name: sst2}\nembedding: {path: v.vec}\nmechanisms: [{name: laplace, epsilon: [10]}]\nmodel: {kind: transformer, checkpoint: bert}\n"), experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cell := experiments.Cell{Seed: 1} // the baseline: its model trains, nothing is privatized
	_, cpu := (&rateBook{c: c, dev: gotch.CPU}).keys(cell, 2)
	_, cuda := (&rateBook{c: c, dev: gotch.CudaBuilder(0)}).keys(cell, 2)
	if want := `train sst2 {"kind":"transformer","params":{"checkpoint":"bert"}} max_len=64 batch=64 threads=2`; cpu != want {
		t.Errorf("cpu: %q, want %q", cpu, want)
	}
	if cuda == cpu || !strings.Contains(cuda, "cuda") {
		t.Errorf("cuda: %q, cpu: %q", cuda, cpu)
	}
	// A GPU's speed does not hang on the host's threads: a GPU node's
	// rate (16 threads) prices a GPU run planned on a 2-core login node.
	if _, node := (&rateBook{c: c, dev: gotch.CudaBuilder(0)}).keys(cell, 16); node != cuda {
		t.Errorf("cuda at 16 threads: %q, at 2: %q", node, cuda)
	}
}
