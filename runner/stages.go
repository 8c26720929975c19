package runner

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/xp-nlp/xp/analysis"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/torchrt"
)

// stageJob is one result of a stage: its coordinates, the records it
// reads, and how to compute it from them.
type stageJob struct {
	cell    experiments.Cell
	inputs  []results.Record
	compute func(ctx context.Context) (metrics.Analysis, error)
}

// runStages runs the config's stages in order after its cells. Each
// stage reads the run's cell records and the results of the stages
// before it; each result is a record keyed by the stage, its parameters,
// its coordinates and the keys of the records it read, so it is reused
// until one of them changes. A result whose inputs failed is recorded as
// failed; one whose inputs are missing is left out (say so in the log).
func runStages(ctx context.Context, s *Session, store *results.Store, prov results.Provenance, sum *Summary) error {
	c := s.c
	if len(c.Stages) == 0 {
		return nil
	}
	cells, err := store.Records(sum.Keys())
	if err != nil {
		return err
	}
	// A record's cell comes back from JSON with its parameters as float64
	// (k: 50.0), which the mechanism's descriptor refuses for an integer;
	// stages build mechanisms from cells, so they take the planned cell
	// (the config's types; the same JSON, so the same keys).
	planned := make(map[string]experiments.Cell, len(sum.Cells))
	for _, cs := range sum.Cells {
		planned[cs.Key] = cs.Cell
	}
	for k := range cells {
		if c, ok := planned[cells[k].Key]; ok {
			cells[k].Cell = c
		}
	}
	var done []results.Record
	var ran stageCells
	defer func() { // what ran is counted even when a later stage fails
		sum.StageCells = ran.Cells
		sum.Trained += ran.Trained
	}()
	for i, st := range c.Stages {
		plan, ok := stageJobs[st.Kind]
		if !ok {
			return fmt.Errorf("stage %s is described in spec but not run by the runner", st.Kind)
		}
		jobs := plan(s, stageInputs{c: c, i: i, cells: cells, done: done, store: store, prov: prov, ran: &ran})
		for _, j := range jobs {
			if err := ctx.Err(); err != nil {
				return err
			}
			keys := make([]string, len(j.inputs))
			for k, r := range j.inputs {
				keys[k] = r.Key
			}
			cs := CellStatus{Key: c.StageKey(i, j.cell, keys), Cell: j.cell}
			rec, ok, err := store.Get(cs.Key)
			if err != nil {
				return err
			}
			if ok && rec.Status == "ok" {
				cs.Status = "cached"
				for _, k := range rec.Ran { // its cells outside the plan stay the run's
					r, has, err := store.Get(k)
					if err != nil {
						return err
					}
					if has {
						ran.Cells = append(ran.Cells, CellStatus{Key: k, Cell: r.Cell, Status: "cached", Stage: st.Kind})
					}
				}
			} else {
				before := len(ran.Cells)
				rec = s.runStage(ctx, cs, keys, j, prov)
				rec.Ran = keysOf(ran.Cells[before:])
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err := store.Put(rec); err != nil {
					return err
				}
				if key, units := s.stageWork(i, j.cell); units > 0 && rec.Status == "ok" && rec.Provenance.WallSeconds > 0 {
					s.noteRate(key, rate{PerSec: float64(units) / rec.Provenance.WallSeconds})
				}
				cs.Status, cs.Error = rec.Status, rec.Error
				s.logf("%s: %s", j.cell, outcome(rec))
			}
			done = append(done, rec)
			sum.Stages = append(sum.Stages, cs)
		}
	}
	return nil
}

// stageInputs is what a stage's jobs are planned from: the config and
// the stage's index, the run's cell records, the results of the stages
// before it, and the store and provenance for the cells a stage runs
// itself.
type stageInputs struct {
	c     *experiments.Config
	i     int
	cells []results.Record
	done  []results.Record
	store *results.Store
	prov  results.Provenance
	ran   *stageCells // the cells outside the plan that stages ran or reused
}

// stageCells are the utility cells stages decided on (matched-privacy's
// at the ε found), with how many models running them trained.
type stageCells struct {
	Cells   []CellStatus
	Trained int
}

// stageJobs plan each stage kind's results (spec describes the kinds;
// TestEveryStageRun checks each has its entry).
var stageJobs = map[string]func(s *Session, in stageInputs) []stageJob{
	"utility-loss": func(_ *Session, in stageInputs) []stageJob { return utilityLossJobs(in.c, in.i, in.cells) },
	"select": func(_ *Session, in stageInputs) []stageJob {
		return selectJobs(in.c, in.i, append(slices.Clone(in.cells), in.done...))
	},
	"epsilon-search": func(s *Session, in stageInputs) []stageJob { return s.searchJobs(in.c, in.i, in.cells) },
	"matched-privacy": func(s *Session, in stageInputs) []stageJob {
		return s.matchedJobs(in)
	},
}

// runStage computes one stage result, failing it when an input failed.
func (s *Session) runStage(ctx context.Context, cs CellStatus, keys []string, j stageJob, prov results.Provenance) results.Record {
	start := time.Now()
	rec := results.Record{Key: cs.Key, Cell: j.cell, Notion: j.cell.Notion(), Status: "ok", Inputs: keys, Provenance: prov}
	rec.Provenance.Started = start.UTC().Format(time.RFC3339)
	for _, in := range j.inputs {
		if in.Status != "ok" {
			rec.Status, rec.Error = "failed", fmt.Sprintf("input %s failed: %s", in.Cell, in.Error)
			return rec
		}
	}
	a, err := j.compute(ctx)
	if err != nil {
		rec.Status, rec.Error = "failed", s.oneLine(cs.Key, err)
	} else {
		rec.Analysis = &a
	}
	rec.Provenance.WallSeconds = time.Since(start).Seconds()
	rec.Provenance.PeakRSSBytes, _ = torchrt.PeakResidentBytes()
	return rec
}

// point is a cell's coordinates without its analysis and mode: what
// stages join records on.
func point(c experiments.Cell) string {
	return c.Setting() + " ε=" + strconv.FormatFloat(c.Epsilon, 'g', -1, 64) + " seed=" + strconv.FormatUint(c.Seed, 10)
}

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

// selectJobs run Algorithm 2 per mechanism and seed over the records that
// carry both the privacy and the loss statistic.
func selectJobs(c *experiments.Config, i int, recs []results.Record) []stageJob {
	v := c.StageParams(i)
	privacy, loss, budget, paper := v.String("privacy"), v.String("loss"), v.Float("budget"), v.String("procedure") == "paper"
	type group struct {
		mech string
		seed uint64
	}
	groups := map[group][]results.Record{}
	var order []group
	// The records that carry the loss: the analysis cells for the
	// lexicon's L_M, the utility-loss results for an accuracy drop. A
	// failed one fails its group's selection (a choice made without it
	// could be wrong).
	from := "utility-loss"
	if loss == "L_M flip" || loss == "L_M loss" {
		from = c.Analysis.Kind
	}
	for _, r := range recs {
		if r.Cell.Mechanism == "" || r.Cell.Analysis != from {
			continue
		}
		g := group{r.Cell.Mechanism, r.Cell.Seed}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], r)
	}
	var jobs []stageJob
	for _, g := range order {
		inputs := groups[g]
		jobs = append(jobs, stageJob{cell: experiments.Cell{Analysis: "select", Mechanism: g.mech, Seed: g.seed}, inputs: inputs,
			compute: func(context.Context) (metrics.Analysis, error) {
				pts := make([]analysis.Point, len(inputs))
				for k, r := range inputs {
					pts[k] = analysis.Point{Setting: r.Cell.Setting(), Epsilon: r.Cell.Epsilon, Stats: map[string]float64{}, Start: experiments.IsStart(r.Cell)}
					for _, st := range r.Analysis.Stats {
						pts[k].Stats[st.Name] = float64(st.Value)
					}
				}
				var a metrics.Analysis
				a.Add("budget", budget)
				var best int
				if paper {
					sel := analysis.SelectPaper(pts, privacy, loss, budget)
					a.Method = fmt.Sprintf("Algorithm 2 as published: ε doubled on t = 0 (Laplace) until %s < %g, then the largest %s with %s ≤ %g at that ε", loss, budget, privacy, loss, budget)
					a.Add("feasible", float64(sel.Feasible))
					a.Add("scanned", float64(sel.Scanned))
					if !doubling(sel.Steps) {
						a.Notes = append(a.Notes, fmt.Sprintf("the start setting's ε (%v) are not ε0·2^k: the procedure walked the grid's ε, not the paper's doubling", sel.Steps))
					}
					if sel.Best < 0 {
						a.Notes = append(a.Notes, fmt.Sprintf("%s: %s", g.mech, cmp.Or(sel.Why, fmt.Sprintf("no setting at ε %g has %s ≤ %g", sel.Epsilon, loss, budget))))
						return a, nil
					}
					best = sel.Best
				} else {
					var feasible int
					best, feasible = analysis.Select(pts, privacy, loss, budget)
					a.Method = fmt.Sprintf("grid arg-max (not Algorithm 2's procedure): largest %s with %s ≤ %g over %d settings × ε", privacy, loss, budget, len(pts))
					a.Add("feasible", float64(feasible))
					if best < 0 {
						a.Notes = append(a.Notes, fmt.Sprintf("no setting of %s has %s ≤ %g", g.mech, loss, budget))
						return a, nil
					}
				}
				r := inputs[best]
				a.Add(privacy, pts[best].Stats[privacy])
				a.Add(loss, pts[best].Stats[loss])
				a.Add("ε", r.Cell.Epsilon)
				for _, k := range slices.Sorted(maps.Keys(r.Cell.Params)) {
					if x, ok := r.Cell.Params[k].(float64); ok {
						a.Add(k, x)
					} else if n, ok := r.Cell.Params[k].(int); ok {
						a.Add(k, float64(n))
					}
				}
				a.Notes = append(a.Notes, fmt.Sprintf("seed %d chose %s ε=%g", g.seed, pts[best].Setting, r.Cell.Epsilon))
				return a, nil
			}})
	}
	return jobs
}

// searchJobs find, per mechanism setting and seed of the examples cells,
// the ε giving each target mean N_w over the examples' words, and show
// the examples there (Feyisetan et al. 2020, Table 1).
func (s *Session) searchJobs(c *experiments.Config, i int, cells []results.Record) []stageJob {
	v := c.StageParams(i)
	words := c.AnalysisParams().Strings("list")
	var jobs []stageJob
	for _, inputs := range groupBySettingSeed(cells, recordCell, "examples").groups {
		cell := inputs[0].Cell
		cell.Analysis, cell.Epsilon = "epsilon-search", 0
		jobs = append(jobs, stageJob{cell: cell, inputs: inputs, compute: func(ctx context.Context) (metrics.Analysis, error) {
			var a metrics.Analysis
			draws := v.Int("draws")
			a.Method = fmt.Sprintf("search on log ε over [%g, %g] (bracketed from the middle by decades, then bisected); mean N_w from %d draws per word of %d words", v.Float("lo"), v.Float("hi"), draws, len(words))
			a.Examples = map[string][]string{}
			for _, target := range v.Floats("targets") {
				nw := func(eps float64) (float64, error) {
					probe := cell
					probe.Analysis, probe.Epsilon = "plausible-deniability", eps
					env, _, err := s.analysisEnv(probe)
					if err != nil {
						return 0, err
					}
					res, err := analysis.Run(ctx, probe.Analysis, map[string]any{"from": "list", "list": words, "draws": draws}, env)
					a.Lookups += res.Lookups
					return res.Stat("N_w %") / 100, err
				}
				eps, got, trace, ok, err := analysis.SearchEpsilon(ctx, target, v.Float("lo"), v.Float("hi"), v.Float("tolerance"), v.Int("probes"), nw)
				if err != nil {
					return a, err
				}
				t := strconv.FormatFloat(target, 'g', -1, 64)
				lo, hi := analysis.Bracket(trace, target, eps)
				a.AddBracket("ε @ N_w "+t, eps, lo, hi)
				a.Add("N_w share @ "+t, got)
				a.Add("probes @ "+t, float64(len(trace)))
				if !ok {
					a.Notes = append(a.Notes, fmt.Sprintf("target N_w %s not reached within tolerance in [%g, %g] after %d probes: closest %.4g at ε %.4g", t, v.Float("lo"), v.Float("hi"), len(trace), got, eps))
					a.Flag("target N_w " + t + " not reached")
				}
				if eps == v.Float("lo") || eps == v.Float("hi") {
					a.Flag(fmt.Sprintf("N_w %s: stopped at the range's end (ε %g)", t, eps))
				}
				at := cell
				at.Analysis, at.Epsilon = "examples", eps
				env, _, err := s.analysisEnv(at)
				if err != nil {
					return a, err
				}
				ex, err := analysis.Run(ctx, "examples", c.Analysis.Params, env)
				if err != nil {
					return a, err
				}
				a.Lookups += ex.Lookups
				for w, outs := range ex.Examples {
					a.Examples[fmt.Sprintf("%s @ N_w %s (ε %.4g)", w, t, eps)] = outs
				}
			}
			return a, nil
		}})
	}
	return jobs
}

// matchedJobs compare the mechanisms at matched privacy: per mechanism
// setting and seed of the reconstruction cells, the ε at which the
// context-free attacker recovers the target share of tokens, and at that
// ε the whole attack and the utility cell of the stage's apply mode,
// beside the seed's baseline. The utility cell at the ε found is run and
// recorded like any cell (under its own key, so a killed stage keeps it
// and a rerun reuses it); it is not one of the run's planned cells.
func (s *Session) matchedJobs(in stageInputs) []stageJob {
	c, cells := in.c, in.cells
	v := c.StageParams(in.i)
	target, mode := v.Float("target"), v.String("apply")
	byGroup := groupBySettingSeed(cells, recordCell, "reconstruction")
	var jobs []stageJob
	for _, group := range byGroup.groups {
		cell := group[0].Cell
		b, ok := byGroup.baseline[cell.Seed]
		if !ok {
			continue
		}
		inputs := append(slices.Clone(group), b)
		cell.Analysis, cell.Epsilon = "matched-privacy", 0
		jobs = append(jobs, stageJob{cell: cell, inputs: inputs, compute: func(ctx context.Context) (metrics.Analysis, error) {
			var a metrics.Analysis
			at := func(eps float64) experiments.Cell {
				x := cell
				x.Analysis, x.Epsilon = "reconstruction", eps
				return x
			}
			recovery := func(eps float64) (float64, error) {
				env, _, err := s.analysisEnv(at(eps))
				if err != nil {
					return 0, err
				}
				pct, n, err := analysis.ContextFreeRecovery(ctx, c.Analysis.Params, env)
				a.Lookups += n
				s.logf("%s: ε %.4g: context-free recovery %.2f%% (target %g%%)", cell, eps, pct, target)
				return pct, err
			}
			eps, got, trace, found, err := analysis.SearchEpsilon(ctx, target, v.Float("lo"), v.Float("hi"), v.Float("tolerance"), v.Int("probes"), recovery)
			if err != nil {
				return a, err
			}
			a.Method = fmt.Sprintf("search on log ε over [%g, %g] (bracketed from the middle by decades, then bisected) for the context-free attacker's recovery %g%% (%d probes), then the attack and a utility cell (apply %s) at the ε found", v.Float("lo"), v.Float("hi"), target, len(trace), mode)
			if !found {
				a.Notes = append(a.Notes, fmt.Sprintf("target recovery %g%% not reached within tolerance in [%g, %g] after %d probes: closest %.4g%% at ε %.4g (the results below are at that ε)", target, v.Float("lo"), v.Float("hi"), len(trace), got, eps))
				a.Flag(fmt.Sprintf("target not reached (%.3g%% at ε %.4g)", got, eps))
			}
			if eps == v.Float("lo") || eps == v.Float("hi") {
				a.Flag(fmt.Sprintf("stopped at the range's end (ε %g)", eps))
			}
			env, _, err := s.analysisEnv(at(eps))
			if err != nil {
				return a, err
			}
			attack, err := analysis.Run(ctx, "reconstruction", c.Analysis.Params, env)
			if err != nil {
				return a, err
			}
			a.Lookups += attack.Lookups
			a.Add("ε", eps)
			a.Add("probes", float64(len(trace)))
			for _, st := range []string{"context-free recovery %", "recovery %", "context-free recovery % rare", "recovery % rare", "unchanged %", "tokens"} {
				a.Add(st, attack.Stat(st))
			}
			for _, f := range attack.Flags {
				a.Flag(f)
			}
			u := experiments.Cell{Mechanism: cell.Mechanism, Params: cell.Params, Epsilon: eps, Mode: mode, Seed: cell.Seed}
			rec, err := s.runRecorded(ctx, in, u)
			if err != nil {
				return a, err
			}
			base := inputs[len(inputs)-1].Test.Accuracy
			a.Add("accuracy", rec.Test.Accuracy)
			a.Add("baseline accuracy", base)
			a.Add("Δ accuracy", rec.Test.Accuracy-base)
			a.Notes = append(a.Notes, fmt.Sprintf("seed %d: ε %.4g; utility cell %s (key %.12s)", cell.Seed, eps, u, rec.Key))
			return a, nil
		}})
	}
	return jobs
}

// runRecorded returns cell's record from the store, running and
// recording it first when the store has no finished one: a cell that a
// stage decides on, outside the run's plan, listed in the run's summary
// (StageCells) so that cells.csv shows it and the models it trains are
// counted. A failed cell is an error.
func (s *Session) runRecorded(ctx context.Context, in stageInputs, cell experiments.Cell) (results.Record, error) {
	store := in.store
	key := s.Key(cell)
	rec, ok, err := store.Get(key)
	if err != nil {
		return rec, err
	}
	cs := CellStatus{Key: key, Cell: cell, Status: "cached", Stage: in.c.Stages[in.i].Kind}
	defer func() { in.ran.Cells = append(in.ran.Cells, cs) }()
	if !ok || rec.Status != "ok" {
		if rec, err = s.record(ctx, store, key, cell, in.prov, s.progress); err != nil {
			return rec, err
		}
		cs.Status, cs.Error = rundir.StatusOf(rec, true)
		if rec.Status == "ok" && rec.Model != "" && !rec.Provenance.ModelReused {
			in.ran.Trained++
		}
	}
	if rec.Status != "ok" {
		return rec, fmt.Errorf("%s: %s", cell, rec.Error)
	}
	return rec, nil
}

// doubling reports whether each ε is twice the one before (Algorithm 2's
// steps), to a relative 1e-9.
func doubling(eps []float64) bool {
	for i := 1; i < len(eps); i++ {
		if math.Abs(eps[i]/eps[i-1]-2) > 1e-9 {
			return false
		}
	}
	return true
}

// settingSeedGroups groups the items whose cell is of the named analysis
// by mechanism setting and seed, in the order first seen — the unit of a
// searching stage's results, of its price and of its jobs alike — and
// keeps each seed's baseline (the utility cell of mode none).
type settingSeedGroups[T any] struct {
	groups   [][]T
	baseline map[uint64]T
}

func groupBySettingSeed[T any](items []T, cellOf func(T) experiments.Cell, analysis string) settingSeedGroups[T] {
	out := settingSeedGroups[T]{baseline: map[uint64]T{}}
	at := map[string]int{}
	for _, it := range items {
		cell := cellOf(it)
		switch {
		case cell.Analysis == "" && cell.Mode == "none":
			out.baseline[cell.Seed] = it
		case cell.Analysis == analysis && cell.Mechanism != "":
			g := cell.Setting() + " seed=" + strconv.FormatUint(cell.Seed, 10)
			i, ok := at[g]
			if !ok {
				i = len(out.groups)
				at[g] = i
				out.groups = append(out.groups, nil)
			}
			out.groups[i] = append(out.groups[i], it)
		}
	}
	return out
}

func recordCell(r results.Record) experiments.Cell { return r.Cell }
