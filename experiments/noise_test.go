package experiments

import (
	"strings"
	"testing"
)

// TestCommonNoise: under common_noise a Vickrey cell takes the streams of
// the mechanism whose noise it draws at the same ε (Laplace's; with
// lambda, Mahalanobis's at that λ), its keys change and every other
// cell's stay as they were, and the analysis cells that draw one noise
// at an ε and seed are one group; off (the default), nothing changes.
func TestCommonNoise(t *testing.T) {
	const text = `name: k
dataset: {name: sst2}
embedding: {path: e.vec}
analysis: {kind: bayes-adversary, samples: 10}
mechanisms:
  - {name: laplace, epsilon: [1, 5]}
  - {name: vickrey, epsilon: [1, 5], grid: {t: [0.25, 1]}}
  - {name: vickrey, epsilon: [5], grid: {lambda: [0.3], t: [0.5]}}
  - {name: mahalanobis, epsilon: [5], grid: {lambda: [0.3, 0.2]}}
  - {name: santext, epsilon: [5]}
seeds: [1, 2]
`
	in := Inputs{Data: "d", Embedding: "e"}
	off, on := parse(t, text), parse(t, text)
	on.CommonNoise = true
	cells := off.Cells()
	byName := map[string]Cell{}
	for _, cell := range cells {
		byName[cell.String()] = cell
		if got := off.SourceStream(cell); got != cell.Stream() {
			t.Errorf("%s: stream %q without common_noise, want its own %q", cell, got, cell.Stream())
		}
	}
	streamOf := func(name string) string {
		t.Helper()
		cell, ok := byName[name]
		if !ok {
			t.Fatalf("no cell %q", name)
		}
		return on.SourceStream(cell)
	}
	for _, c := range []struct{ cell, like string }{
		{"bayes-adversary: vickrey t=0.25 ε=1 seed=1", "bayes-adversary: laplace ε=1 seed=1"},
		{"bayes-adversary: vickrey t=1 ε=5 seed=2", "bayes-adversary: laplace ε=5 seed=2"},
		{"bayes-adversary: vickrey lambda=0.3 t=0.5 ε=5 seed=1", "bayes-adversary: mahalanobis lambda=0.3 ε=5 seed=1"},
	} {
		if got, want := streamOf(c.cell), streamOf(c.like); got != want {
			t.Errorf("%s: stream %q under common_noise, want %s's %q", c.cell, got, c.like, want)
		}
		if g, w := on.GroupKey(byName[c.cell], in), on.GroupKey(byName[c.like], in); g != w {
			t.Errorf("%s and %s: groups differ under common_noise", c.cell, c.like)
		}
	}
	if streamOf("bayes-adversary: vickrey t=0.25 ε=1 seed=1") == streamOf("bayes-adversary: vickrey t=0.25 ε=5 seed=1") {
		t.Errorf("vickrey at ε = 1 and 5 share a stream")
	}
	if on.GroupKey(byName["bayes-adversary: laplace ε=5 seed=1"], in) == on.GroupKey(byName["bayes-adversary: mahalanobis lambda=0.3 ε=5 seed=1"], in) ||
		on.GroupKey(byName["bayes-adversary: laplace ε=5 seed=1"], in) == on.GroupKey(byName["bayes-adversary: laplace ε=5 seed=2"], in) {
		t.Errorf("cells of different noise or seeds grouped together")
	}
	for _, cell := range cells {
		vickrey := cell.Mechanism == "vickrey"
		for what, keys := range map[string][2]string{
			"key":       {off.Key(cell, in), on.Key(cell, in)},
			"draws key": {off.DrawsKey(cell, in), on.DrawsKey(cell, in)},
		} {
			if changed := keys[0] != keys[1]; changed != vickrey {
				t.Errorf("%s: %s changed by common_noise: %v, want %v", cell, what, changed, vickrey)
			}
		}
		if !vickrey && on.SourceStream(cell) != cell.Stream() {
			t.Errorf("%s: stream %q under common_noise, want its own", cell, on.SourceStream(cell))
		}
	}
	u := parse(t, strings.Replace(strings.Replace(text, "analysis: {kind: bayes-adversary, samples: 10}\n", "apply: [none, train, test]\n", 1), "  - {name: santext, epsilon: [5]}\n", "", 1))
	uOn := parse(t, strings.Replace(strings.Replace(text, "analysis: {kind: bayes-adversary, samples: 10}\n", "apply: [none, train, test]\ncommon_noise: true\n", 1), "  - {name: santext, epsilon: [5]}\n", "", 1))
	if !uOn.CommonNoise {
		t.Fatal("common_noise: true not read")
	}
	for _, cell := range u.Cells() {
		vickrey := cell.Mechanism == "vickrey"
		if changed := u.Key(cell, in) != uOn.Key(cell, in); changed != vickrey {
			t.Errorf("%s: key changed by common_noise: %v, want %v", cell, changed, vickrey)
		}
		if cell.Mode == "train" {
			if changed := u.CorpusKey(cell, "train", in) != uOn.CorpusKey(cell, "train", in); changed != vickrey {
				t.Errorf("%s: privatized split's key changed by common_noise: %v, want %v", cell, changed, vickrey)
			}
		}
		if g, w := u.GroupKey(cell, in), u.ModelKey(cell, in); g != w {
			t.Errorf("%s: group %.12s without common_noise, want its model's %.12s", cell, g, w)
		}
		if !cell.Privatizes("train") && uOn.GroupKey(cell, in) != u.GroupKey(cell, in) {
			t.Errorf("%s: group changed by common_noise", cell)
		}
	}
	// the train cells that draw one noise at an ε and seed are one group
	ub := map[string]Cell{}
	for _, cell := range uOn.Cells() {
		ub[cell.String()] = cell
	}
	group := func(name string) string {
		t.Helper()
		cell, ok := ub[name]
		if !ok {
			t.Fatalf("no cell %q", name)
		}
		return uOn.GroupKey(cell, in)
	}
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"laplace ε=1 train seed=1", "vickrey t=0.25 ε=1 train seed=1", true},
		{"vickrey t=1 ε=5 train seed=2", "laplace ε=5 train seed=2", true},
		{"vickrey lambda=0.3 t=0.5 ε=5 train seed=1", "mahalanobis lambda=0.3 ε=5 train seed=1", true},
		{"laplace ε=1 train seed=1", "laplace ε=1 train seed=2", false},
		{"laplace ε=1 train seed=1", "laplace ε=5 train seed=1", false},
		{"laplace ε=5 train seed=1", "mahalanobis lambda=0.3 ε=5 train seed=1", false},
		{"mahalanobis lambda=0.2 ε=5 train seed=1", "mahalanobis lambda=0.3 ε=5 train seed=1", false},
		{"laplace ε=1 train seed=1", "baseline seed=1", false},
		{"laplace ε=1 test seed=1", "baseline seed=1", true},
	} {
		if same := group(c.a) == group(c.b); same != c.same {
			t.Errorf("%s and %s: one group under common_noise: %v, want %v", c.a, c.b, same, c.same)
		}
	}
}
