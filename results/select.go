package results

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/xp-nlp/xp/stats"
)

// selectModels keeps, of each line of a model sweep (one setting, mode, ε
// and stage, every model point), the model point whose mean validation
// accuracy over seeds is highest — ties to the earlier point, lines
// without a validation accuracy last — the baseline's likewise, as a
// researcher tunes the classifier per condition on data the test split
// is not part of. The lines kept are then compared with the baseline
// kept: Δ and its interval are recomputed seed by seed against it (a
// relative Δ, which needs the baseline's own chance level, is dropped).
func selectModels(rows []Row) []Row {
	type cond struct {
		setting, mode, stage string
		eps                  float64
	}
	best := map[cond]int{}
	var order []cond
	for i, r := range rows {
		k := cond{r.Setting, r.Mode, r.Stage, r.Epsilon}
		if r.Stage != "" {
			k.eps = 0
		}
		j, seen := best[k]
		if !seen {
			order = append(order, k)
			best[k] = i
			continue
		}
		if better(r, rows[j]) {
			best[k] = i
		}
	}
	var out []Row
	for _, k := range order {
		r := rows[best[k]]
		r.Selected = true
		out = append(out, r)
	}
	base := slices.IndexFunc(out, func(r Row) bool { return r.Mode == "none" })
	for i := range out {
		r := &out[i]
		if r.Mode == "none" {
			continue
		}
		delete(r.BySeed, RelativeDiff)
		delete(r.BySeed, "Δ accuracy")
		r.Diff, r.DiffCI, r.DiffSeeds = math.NaN(), math.NaN(), 0
		if base < 0 {
			continue
		}
		seeds, d := SeedDiffs(*r, out[base])
		for i, s := range seeds {
			r.BySeed.set("Δ accuracy", s, d[i])
		}
		if r.DiffSeeds = len(d); len(d) > 0 {
			r.Diff, _, r.DiffCI = stats.MeanCI(d)
		}
	}
	return out
}

// better reports whether line a's model point beats b's on validation
// accuracy (a line with no successful seed never does).
func better(a, b Row) bool {
	va, vb := a.ValidAccuracy, b.ValidAccuracy
	switch {
	case a.Seeds == 0 || math.IsNaN(va):
		return false
	case b.Seeds == 0 || math.IsNaN(vb):
		return true
	}
	return cmp.Or(cmp.Compare(va, vb), cmp.Compare(b.modelOrder, a.modelOrder)) > 0
}

// modelSeed is a model point and a seed: what a baseline's accuracy is
// looked up by.
type modelSeed struct {
	model string
	seed  uint64
}

// SeedDiffs are line a's accuracy minus line b's on each seed both have,
// in seed order: the paired differences Δ, select and side by side read.
func SeedDiffs(a, b Row) (seeds []uint64, d []float64) {
	for _, s := range slices.Sorted(maps.Keys(a.BySeed["accuracy"])) {
		if y, ok := b.BySeed["accuracy"][s]; ok {
			seeds, d = append(seeds, s), append(d, a.BySeed["accuracy"][s]-y)
		}
	}
	return seeds, d
}
