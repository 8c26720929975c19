package runner

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/xp-nlp/xp/analysis"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
)

// Estimate is what a dry run says the cells to run will compute, and how
// long that should take on this machine.
type Estimate struct {
	// Privatizations are the privatized splits not in the corpus cache,
	// with their tokens; Trainings the models not in the model cache, with
	// the examples they train on (epochs × training split, an upper bound
	// under early stopping).
	Privatizations, Trainings int
	Tokens, Examples          int64
	// Measured counts the privatized splits whose opt-in privacy measures
	// are to be computed (config key privacy), and Lookups the draws they
	// need at most (word types × draws; fewer where the draws cache holds
	// words or the mechanism's distribution is exact), priced at the
	// mechanism's privatization rate (batched draws run at about that
	// rate: BenchmarkDrawsVsPrivatize).
	Measured int
	Lookups  int64
	// Analyses counts the analysis cells to run and AnalysisLookups the
	// draws the sampled ones make at most (analysis.Plan: rows × draws);
	// each is priced at the rate of the same analysis and mechanism
	// measured by an earlier cell (per draw where those were sampled, per
	// row where exact), or else — for a mechanism without a closed form —
	// its draws at the mechanism's privatization rate.
	Analyses        int
	AnalysisLookups int64
	// Stages counts the stage results to compute that search (the
	// epsilon-search and matched-privacy stages; the others combine
	// records), and StageLookups the draws and privatized tokens their
	// probes take, with the search's probes estimated (searchProbes).
	// A matched-privacy result also prices its attack and utility cell at
	// the ε found.
	Stages       int
	StageLookups int64
	// Seconds is the sum over the work with a recorded rate, and the
	// run's fixed costs (Load, Outputs) where there is any such work;
	// Unknown lists the work without one (no earlier run on this host
	// measured it), which Seconds leaves out.
	Seconds float64
	Unknown []string
	// Load and Outputs, parts of Seconds, are the run's fixed costs:
	// starting the process (libtorch's libraries) and loading the inputs
	// (vectors, data), as long as this process took to, and writing the
	// tables, plots and report of all the config's cells, at the rate
	// per cell the last run on this host wrote them. Short runs are
	// mostly these.
	Load, Outputs float64
	// Rough is the part of Seconds priced for cells whose cost depends
	// on more than their size (analysis.Work.Varies), RoughCells their
	// number and RoughWhy why: a rate measured on other cells prices
	// them only roughly (docs/performance.md: several times off).
	Rough      float64
	RoughCells int
	RoughWhy   string
	// Borrowed is the part of Seconds priced at the speed of another
	// mechanism with the same search (mech.SameSearch: Vickrey at
	// Laplace's, say), or of a search on another of the CPU's scoring
	// paths (rates recorded before this xp took int8-avx2, say), where no
	// run on this host measured the mechanism on its path; BorrowedFrom
	// maps each rate so missing to the one used.
	Borrowed     float64
	BorrowedFrom map[string]string
	// Calibrated lists the rates no run on this host had recorded that
	// the dry run measured itself on a small sample (calibrate), and
	// CalibrationSeconds how long that took: rough, and high (a sample
	// bears start-up costs a whole split spreads).
	Calibrated         []string
	CalibrationSeconds float64
	// Basis says where the rates come from, and RatesFile is where
	// finished cells record them.
	Basis, RatesFile string
	// Elsewhere, when set, says that the config's device is not on this
	// host (a GPU run planned on a CPU-only one): only rates recorded on
	// that kind of device price its work.
	Elsewhere string
}

// estimator prices a plan's todo cells, and the stage results the store
// lacks, at the rates runs on this host measured (rates.go): what a dry
// run reports. It reads the session (inputs, config, caches) and the
// plan, and changes neither.
type estimator struct {
	s       *Session
	p       *runPlan
	store   *results.Store
	threads int
	rates   map[string]rate
	e       *Estimate
	// seen are the corpora, models, draws and construction keys priced
	// already (each is computed once however many cells share it), drawn
	// the common_noise groups whose draws are priced.
	seen, built, drawn map[string]bool
}

// price adds n units of work at key's rate, or else at the first of the
// borrowed keys measured (another mechanism's rate for the same search:
// sameSearch), or lists key as unknown.
func (x *estimator) price(key string, n int64, borrowed ...string) {
	e := x.e
	if r, ok := x.rates[key]; ok && r.PerSec > 0 {
		e.Seconds += float64(n) / r.PerSec
		return
	}
	for _, b := range borrowed {
		if r, ok := x.rates[b]; ok && r.PerSec > 0 {
			e.Seconds += float64(n) / r.PerSec
			e.Borrowed += float64(n) / r.PerSec
			if e.BorrowedFrom == nil {
				e.BorrowedFrom = map[string]string{}
			}
			e.BorrowedFrom[key] = b
			return
		}
	}
	x.unknown(key)
}

func (x *estimator) unknown(key string) {
	if !slices.Contains(x.e.Unknown, key) {
		x.e.Unknown = append(x.e.Unknown, key)
	}
}

// privatization adds privatizing n tokens with cell's mechanism.
func (x *estimator) privatization(priv string, cell experiments.Cell, n int64) {
	x.e.Privatizations++
	x.e.Tokens += n
	x.price(priv, n, x.s.rates.sameSearch(cell, false)...)
}

// construction adds building the cell's mechanism's costly structure,
// once per setting, unless the cache holds it.
func (x *estimator) construction(cell experiments.Cell) {
	s := x.s
	keys := s.rates.constructKeys(cell)
	key := keys[0]
	if cell.Mechanism == "" || x.built[key] {
		return
	}
	x.built[key] = true
	space := &mech.Space{Emb: s.in.mech, CacheDir: filepath.Join(s.c.Cache, "mech"), KeepCache: true}
	if mech.Prebuilt(space, cell.Mechanism, cell.Params, s.in.counts) {
		return
	}
	if r, ok := firstRate(x.rates, keys); ok {
		x.e.Seconds += 1 / r.PerSec
	} else {
		x.unknown(key)
	}
}

// training adds the training of cell's model unless the model cache
// holds it or another cell already priced it.
func (x *estimator) training(cell experiments.Cell, train string) {
	s := x.s
	key := s.c.ModelKey(cell, s.in.sums)
	if x.seen[key] || exists(filepath.Join(s.c.Cache, modelsDir, key, modelMetaFile)) {
		return
	}
	x.seen[key] = true
	n := int64(s.c.TrainAt(cell).Epochs) * int64(len(s.in.splits["train"].Docs))
	x.e.Trainings++
	x.e.Examples += n
	x.price(train, n)
}

// analysis adds an analysis cell's planned work.
func (x *estimator) analysis(cell experiments.Cell) {
	s, e := x.s, x.e
	in := s.in.view(cell)
	w, err := analysis.Plan(cell.Analysis, s.c.Analysis.Params, analysis.Env{Space: &mech.Space{Emb: s.in.mech}, Counts: in.counts, Seed: cell.Seed})
	if err != nil {
		e.Unknown = append(e.Unknown, fmt.Sprintf("%s (%v)", cell, err))
		return
	}
	sampled := cell.Mechanism != "" && !mech.Exact(cell.Mechanism) && w.Draws > 1
	if sampled {
		e.AnalysisLookups += w.Units(true)
	}
	keys := analysisRateKeys(cell, s.rates.shape())
	if r, ok := firstRate(x.rates, keys); ok {
		secs := float64(w.Units(r.Sampled)) / r.PerSec
		e.Seconds += secs
		if w.Varies != "" {
			e.Rough += secs
			e.RoughCells++
			e.RoughWhy = fmt.Sprintf("%s cells: %s", cell.Analysis, w.Varies)
		}
		return
	}
	if priv, _ := s.rates.keys(cell, 0); sampled {
		x.price(priv, w.Units(true), s.rates.sameSearch(cell, true)...) // batched draws run at about the privatization rate
	} else {
		x.unknown(keys[len(keys)-1])
	}
}

// searchProbes is the number of ε a stage's search over [lo, hi] is
// expected to probe (analysis.SearchEpsilon): two to bracket the target
// from the middle, then halvings of that bracket (a decade at most)
// until it is 1% wide in ε — at most max. The search stops earlier when
// a probe lands within the tolerance of the target.
func searchProbes(lo, hi float64, max int) int {
	return min(max, 2+int(math.Ceil(math.Log2(math.Log(min(hi/lo, 10))/math.Log(1.01)))))
}

// stageGroup is what a stage kind's price reads of one result: the
// stage's index, the group's first cell and all its cells, and the
// result's work.
type stageGroup struct {
	i     int
	cell  experiments.Cell
	cells []rundir.CellStatus
	units int64
}

// tokens counts the split's tokens (both texts of pairs).
func (sp Split) tokens() int64 {
	var n int64
	for _, docs := range [][][]string{sp.Docs, sp.Docs2} {
		for _, d := range docs {
			n += int64(len(d))
		}
	}
	return n
}
