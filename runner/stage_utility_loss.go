package runner

import (
	"context"
	"math"

	"github.com/xp-nlp/xp/analysis"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/results"
)

// utilityLossStage: per analysis cell, the utility loss of each apply
// mode against the seed's baseline (stageKind).
var utilityLossStage = stageKind{name: "utility-loss",
	jobs: func(_ *Session, in stageInputs) []stageJob { return utilityLossJobs(in.c, in.i, in.cells) }}

// utilityLossJobs pair each analysis cell with the utility cells of its
// setting, ε and seed and the baseline of its seed: L_M of an apply mode
// is the baseline's test accuracy minus the mode's, beside the analysis's
// E_M (Xu et al. 2021: the utility loss of a sentence dataset).
func utilityLossJobs(c *experiments.Config, i int, cells []results.Record) []stageJob {
	modes := c.StageParams(i).Strings("apply")
	baseline := map[uint64]results.Record{}
	utility := map[string]results.Record{}
	for _, r := range cells {
		switch {
		case r.Cell.Analysis != "":
		case r.Cell.Mode == "none":
			baseline[r.Cell.Seed] = r
		default:
			utility[point(r.Cell)+" "+r.Cell.Mode] = r
		}
	}
	var jobs []stageJob
	for _, r := range cells {
		if r.Cell.Analysis == "" {
			continue
		}
		b, ok := baseline[r.Cell.Seed]
		if !ok {
			continue
		}
		inputs := []results.Record{r, b}
		for _, m := range modes {
			if u, ok := utility[point(r.Cell)+" "+m]; ok {
				inputs = append(inputs, u)
			}
		}
		if len(inputs) != 2+len(modes) {
			continue
		}
		cell := r.Cell
		cell.Analysis = "utility-loss"
		jobs = append(jobs, stageJob{cell: cell, inputs: inputs, compute: func(context.Context) (metrics.Analysis, error) {
			em := math.NaN()
			if x := inputs[0].Analysis; x != nil {
				em = x.Stat("E_M")
			}
			acc := make([]float64, len(modes))
			for k := range modes {
				acc[k] = inputs[2+k].Test.Accuracy
			}
			return analysis.UtilityLoss(em, inputs[1].Test.Accuracy, modes, acc), nil
		}})
	}
	return jobs
}
