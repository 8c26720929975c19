package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/analysis"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/mech/knn"
	"github.com/xp-nlp/xp/results"
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
	// mostly these (CusText Table 6: 0.8 of its 1.3 s).
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
	// Basis says where the rates come from.
	Basis string
}

// outputsRate names the speed of writing a run's tables, plots and
// report, in cells per second.
const outputsRate = "write outputs"

// ratesFile holds, per host, the speeds earlier runs measured (see
// rateKeys): cache/rates.json. Only estimates read it.
const ratesFile = "rates.json"

type rate struct {
	PerSec float64 `json:"per_sec"`
	When   string  `json:"when"`
	// Sampled, for an analysis's rate: per draw (its cells sampled their
	// outputs), not per row.
	Sampled bool `json:"sampled,omitempty"`
}

// rateKeys name the speeds that a cell's work runs at: privatizing with
// its mechanism (tokens/s) over these candidates with this search,
// training its model on this data (examples/s; the model's parameters,
// the sequence bound, batch and threads set it).
func (s *Session) rateKeys(cell experiments.Cell, threads int) (privatize, train string) {
	if cell.Mechanism != "" {
		privatize = "privatize " + cell.Mechanism + s.searchShape()
	}
	m, _ := json.Marshal(s.c.Model)
	train = fmt.Sprintf("train %s %s max_len=%d batch=%d threads=%d", s.c.Dataset.Name, m, s.c.Train.MaxLen, s.c.Train.Batch, threads)
	return privatize, train
}

// analysisRateKeys name the speed of an analysis's cells (whole cells:
// the mechanism's construction included) over these candidates with this
// search, most specific first: the cell's mechanism setting (its
// parameters: what an exact mechanism's construction grows with,
// CusText's K) at its ε, the setting at any ε, the mechanism at the
// cell's ε, the mechanism at any ε. An estimate prices a cell at the
// first one measured. ε counts because an analysis's cost can depend on
// it: the query attack's vote needs more draws the closer the runner-up
// is to the word, which it is at small ε (CusText K = 20: 106 s at
// ε = 1, 2 s at ε = 2); a sampled analysis's cost per draw hardly does,
// so a setting measured at another ε comes before another setting at
// this one.
func analysisRateKeys(cell experiments.Cell, shape string) []string {
	if cell.Mechanism == "" {
		return []string{strings.TrimSpace("analysis "+cell.Analysis) + shape}
	}
	setting := "analysis " + cell.Analysis + " " + cell.Setting() + shape
	at := " at eps=" + strconv.FormatFloat(cell.Epsilon, 'g', -1, 64)
	return append([]string{setting + at, setting}, mechanismAnalysisKeys(cell.Analysis, cell.Mechanism, cell.Epsilon, shape)...)
}

// mechanismAnalysisKeys are analysisRateKeys' keys of a mechanism (not a
// setting of it): at ε, then at any ε.
func mechanismAnalysisKeys(analysis, mechanism string, eps float64, shape string) []string {
	key := "analysis " + analysis + " " + mechanism + shape
	return []string{key + " at eps=" + strconv.FormatFloat(eps, 'g', -1, 64), key}
}

// firstRate is the rate of the first of keys measured.
func firstRate(rates map[string]rate, keys []string) (rate, bool) {
	for _, k := range keys {
		if r, ok := rates[k]; ok && r.PerSec > 0 {
			return r, true
		}
	}
	return rate{}, false
}

// searchShape names what a lookup costs: the candidate matrix and the
// search's scoring path (a rate measured on other vectors, or on the
// other path, would price the work several times off).
func (s *Session) searchShape() string {
	e := s.in.mech
	return searchShape(e.Len(), e.Dim, s.dev)
}

// searchShape names n candidates of dim dimensions searched on device:
// the path that searches them there and, off the CPU, the device's kind
// (a GPU and a CPU without the kernels both score with float32 products,
// at different speeds).
func searchShape(n, dim int, device gotch.Device) string {
	shape := pathShape(n, dim, knn.AutoScoring(device, dim))
	if device != gotch.CPU {
		shape += " (cuda)"
	}
	return shape
}

func pathShape(n, dim int, path knn.Scoring) string {
	return fmt.Sprintf(" on %d×%d %s", n, dim, path)
}

// otherSearchShapes are searchShape's names for the same candidates on
// the CPU's other scoring paths (none off the CPU): a host's rates may
// have been recorded on one that this xp no longer takes there
// (int8-avx2 replaced the float32 kernel on AVX2 CPUs).
func (s *Session) otherSearchShapes() []string {
	e := s.in.mech
	if s.dev != gotch.CPU {
		return nil
	}
	var out []string
	cur := knn.AutoScoring(s.dev, e.Dim)
	for _, p := range knn.CPUScorings() {
		if p != cur {
			out = append(out, pathShape(e.Len(), e.Dim, p))
		}
	}
	return out
}

func readRates(cache string) map[string]map[string]rate {
	all := map[string]map[string]rate{}
	if b, err := os.ReadFile(filepath.Join(cache, ratesFile)); err == nil {
		json.Unmarshal(b, &all) // a damaged file only loses estimates
	}
	return all
}

// noteRates records the speeds a finished cell measured, for later
// estimates. Processes sharing the cache may overwrite each other's
// update: a lost rate only costs an estimate.
func (s *Session) noteRates(r results.Record) {
	if r.Status != "ok" {
		return
	}
	host := r.Provenance.Host
	all := readRates(s.c.Cache)
	if all[host] == nil {
		all[host] = map[string]rate{}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	switch p, t := s.rateKeys(r.Cell, r.Provenance.Threads); {
	case r.Analysis != nil:
		if secs := r.Provenance.WallSeconds - r.Provenance.ConstructSeconds; r.Provenance.WorkUnits > 0 && secs > 0 {
			rt := rate{float64(r.Provenance.WorkUnits) / secs, now, r.Analysis.Method != "exact"}
			for _, k := range analysisRateKeys(r.Cell, s.searchShape()) {
				all[host][k] = rt
			}
		}
	default:
		if p != "" && r.Provenance.TokensPerSec > 0 {
			all[host][p] = rate{PerSec: r.Provenance.TokensPerSec, When: now}
		}
		if !r.Provenance.ModelReused && r.Provenance.ExamplesPerSec > 0 {
			all[host][t] = rate{PerSec: r.Provenance.ExamplesPerSec, When: now}
		}
	}
	s.writeRates(all)
}

// noteRate records one speed measured on this host (see noteRates).
func (s *Session) noteRate(key string, r rate) {
	host, _ := os.Hostname()
	all := readRates(s.c.Cache)
	if all[host] == nil {
		all[host] = map[string]rate{}
	}
	r.When = time.Now().UTC().Format(time.RFC3339)
	all[host][key] = r
	s.writeRates(all)
}

func (s *Session) writeRates(all map[string]map[string]rate) {
	if b, err := json.MarshalIndent(all, "", "  "); err == nil {
		if err := xio.WriteFileAtomic(filepath.Join(s.c.Cache, ratesFile), b); err != nil {
			s.logf("warning: rates for estimates: %v", err)
		}
	}
}

// constructRateKeys name the speed of building the cell's mechanism
// setting's costly structure (CusText's mapping), in builds per second:
// the setting's own, then the mechanism's (the last setting of it
// built), which prices a setting never built at a sibling's time (CusText's
// mappings: 1–5 s whatever K and mapping on the 44k vectors).
func (s *Session) constructRateKeys(cell experiments.Cell) []string {
	shape := s.searchShape()
	return []string{"construct " + cell.Setting() + shape, "construct " + cell.Mechanism + shape}
}

// priceConstruction adds building the cell's mechanism's costly
// structure to e, once per setting, unless the cache holds it.
func (s *Session) priceConstruction(e *Estimate, cell experiments.Cell, rates map[string]rate, built map[string]bool) {
	keys := s.constructRateKeys(cell)
	key := keys[0]
	if cell.Mechanism == "" || built[key] {
		return
	}
	built[key] = true
	space := &mech.Space{Emb: s.in.mech, CacheDir: filepath.Join(s.c.Cache, "mech")}
	if mech.Prebuilt(space, cell.Mechanism, cell.Params, s.in.counts) {
		return
	}
	if r, ok := firstRate(rates, keys); ok {
		e.Seconds += 1 / r.PerSec
	} else if !slices.Contains(e.Unknown, key) {
		e.Unknown = append(e.Unknown, key)
	}
}

// estimate counts the privatizations and trainings the todo cells need
// (what the caches lack; each once however many cells share it) and
// prices them at the rates recorded on this host.
func (s *Session) estimate(ctx context.Context, store *results.Store, sum *Summary, todo []int, threads int, startup time.Duration) *Estimate {
	host, _ := os.Hostname()
	rates := maps.Clone(readRates(s.c.Cache)[host])
	if rates == nil {
		rates = map[string]rate{}
	}
	e := &Estimate{Basis: fmt.Sprintf("rates measured by earlier runs on %s (%s)", host, filepath.Join(s.c.Cache, ratesFile))}
	cells := make([]experiments.Cell, len(todo))
	for k, i := range todo {
		cells[k] = sum.Cells[i].Cell
	}
	for _, c := range s.calibrate(ctx, rates, cells, threads) {
		rates[c.key] = c.rate
		e.Calibrated = append(e.Calibrated, fmt.Sprintf("%s: %.4g/s on %s", c.key, c.rate.PerSec, c.on))
		e.CalibrationSeconds += c.seconds
	}
	seen, built, drawn := map[string]bool{}, map[string]bool{}, map[string]bool{}
	// price adds n units of work at key's rate, or else at the first of
	// the borrowed keys measured (another mechanism's rate for the same
	// search: sameSearch).
	price := func(key string, n int64, borrowed ...string) {
		if r, ok := rates[key]; ok && r.PerSec > 0 {
			e.Seconds += float64(n) / r.PerSec
			return
		}
		for _, b := range borrowed {
			if r, ok := rates[b]; ok && r.PerSec > 0 {
				e.Seconds += float64(n) / r.PerSec
				e.Borrowed += float64(n) / r.PerSec
				if e.BorrowedFrom == nil {
					e.BorrowedFrom = map[string]string{}
				}
				e.BorrowedFrom[key] = b
				return
			}
		}
		if !slices.Contains(e.Unknown, key) {
			e.Unknown = append(e.Unknown, key)
		}
	}
	measures := s.c.PrivacyMeasures()
	types := map[string]int64{} // split → its word types with a candidate vector
	for _, i := range todo {
		cell := sum.Cells[i].Cell
		if cell.Analysis != "" {
			e.Analyses++
			s.priceConstruction(e, cell, rates, built)
			if g := s.drawGroup(cell); g != "" {
				if drawn[g] {
					continue // its draws are made by its group's first cell (common_noise)
				}
				drawn[g] = true
			}
			s.priceAnalysis(e, cell, rates, price)
			continue
		}
		priv, train := s.rateKeys(cell, threads)
		for _, split := range Splits {
			if !cell.Privatizes(role(split)) {
				continue
			}
			if dk := s.c.DrawsKey(cell, s.in.sums) + " " + split; measures != nil && !seen[dk] {
				seen[dk] = true
				if _, ok := types[split]; !ok {
					for w := range s.in.splitCounts[split] {
						if _, ok := s.in.mech.Index(w); ok {
							types[split]++
						}
					}
				}
				n := types[split]
				if top := int64(measures.Int("top")); top > 0 {
					n = min(n, top)
				}
				e.Measured++
				e.Lookups += n * int64(measures.Int("draws"))
				price(priv, n*int64(measures.Int("draws")), s.sameSearch(cell, false)...)
			}
			key := s.c.CorpusKey(cell, split, s.in.sums)
			if seen[key] || exists(filepath.Join(s.c.Cache, "corpora", key+".gob.gz")) {
				continue
			}
			seen[key] = true
			if g := s.splitGroup(cell, split); g != "" {
				if seen[g] {
					continue // privatized with its group's first missing split (common_noise)
				}
				seen[g] = true
			}
			s.priceConstruction(e, cell, rates, built)
			n := s.in.splits[split].tokens()
			e.Privatizations++
			e.Tokens += n
			price(priv, n, s.sameSearch(cell, false)...)
		}
		s.priceTraining(e, cell, train, seen, price)
	}
	s.priceStages(e, store, sum, seen, threads, rates, price)
	if e.Seconds > 0 { // some work priced: the run starts and loads the inputs first, writes its outputs last
		e.Load = startup.Seconds() + s.loaded
		if r, ok := rates[outputsRate]; ok && r.PerSec > 0 {
			e.Outputs = float64(len(sum.Cells)) / r.PerSec
		}
		e.Seconds += e.Load + e.Outputs
	}
	return e
}

// sameSearch names the rates that may price cell's work where its own
// mechanism has none on this host: those of the mechanisms with the same
// search per token (mech.SameSearch) on this scoring path, then, where
// the host recorded none, its own and theirs on the CPU's other paths
// (otherSearchShapes); with analysis, each one's rates for the cell's
// analysis (at its ε, then at any) before its privatization rates.
func (s *Session) sameSearch(cell experiments.Cell, analysis bool) []string {
	others := mech.SameSearch(cell.Mechanism)
	if others == nil {
		return nil
	}
	var keys []string
	add := func(ms []string, shape string) {
		if analysis {
			for _, m := range ms {
				keys = append(keys, mechanismAnalysisKeys(cell.Analysis, m, cell.Epsilon, shape)...)
			}
		}
		for _, m := range ms {
			keys = append(keys, "privatize "+m+shape)
		}
	}
	add(others, s.searchShape())
	for _, shape := range s.otherSearchShapes() {
		add(append([]string{cell.Mechanism}, others...), shape)
	}
	return keys
}

// pricer prices n units of work at key's rate, or else at a borrowed one
// (estimate's price).
type pricer func(key string, n int64, borrowed ...string)

// priceTraining adds the training of cell's model to e unless the model
// cache holds it or another cell already priced it.
func (s *Session) priceTraining(e *Estimate, cell experiments.Cell, train string, seen map[string]bool, price pricer) {
	key := s.c.ModelKey(cell, s.in.sums)
	if seen[key] || exists(filepath.Join(s.c.Cache, modelsDir, key, modelMetaFile)) {
		return
	}
	seen[key] = true
	n := int64(s.c.Train.Epochs) * int64(len(s.in.splits["train"].Docs))
	e.Trainings++
	e.Examples += n
	price(train, n)
}

// searchProbes is the number of ε a stage's search over [lo, hi] is
// expected to probe (analysis.SearchEpsilon): two to bracket the target
// from the middle, then halvings of that bracket (a decade at most)
// until it is 1% wide in ε — at most max. The search stops earlier when
// a probe lands within the tolerance of the target.
func searchProbes(lo, hi float64, max int) int {
	return min(max, 2+int(math.Ceil(math.Log2(math.Log(min(hi/lo, 10))/math.Log(1.01)))))
}

// priceStages adds the searching stages' work to e: each result the
// store lacks (keyed as runStages keys it, from its inputs' keys),
// grouped by mechanism setting and seed as the stages group.
func (s *Session) priceStages(e *Estimate, store *results.Store, sum *Summary, seen map[string]bool, threads int, rates map[string]rate, price pricer) {
	for i, st := range s.c.Stages {
		kind, ok := stageKindOf(st.Kind)
		if !ok || kind.work == nil {
			continue
		}
		byGroup := groupBySettingSeed(sum.Cells, func(cs CellStatus) experiments.Cell { return cs.Cell }, s.c.Analysis.Kind)
		for _, cells := range byGroup.groups {
			cell := cells[0].Cell
			keys := keysOf(cells)
			if kind.baseline {
				b, ok := byGroup.baseline[cell.Seed]
				if !ok {
					continue
				}
				keys = append(keys, b.Key)
			}
			stage := cell
			stage.Analysis, stage.Epsilon = st.Kind, 0
			if done, err := store.Done(s.c.StageKey(i, stage, keys)); err == nil && done {
				continue
			}
			e.Stages++
			key, units := s.stageWork(i, cell)
			if kind.lookups {
				e.StageLookups += units
			}
			if r, ok := rates[key]; ok && r.PerSec > 0 {
				e.Seconds += float64(units) / r.PerSec // measured by an earlier result of this stage
				continue
			}
			priv, train := s.rateKeys(cell, threads)
			kind.price(s, e, stagePrice{i: i, cell: cell, cells: cells, units: units, priv: priv, train: train, seen: seen, rates: rates, price: price})
		}
	}
}

// stagePrice is what a stage kind's price reads of one result: the
// stage's index, the group's first cell and all its cells, the result's
// work, the rate keys of the cell's privatization and training, and the
// estimate's state and pricer.
type stagePrice struct {
	i           int
	cell        experiments.Cell
	cells       []CellStatus
	units       int64
	priv, train string
	seen        map[string]bool
	rates       map[string]rate
	price       pricer
}

// stageWork is what one result of stage i for cell's mechanism setting
// costs, in the units its rate is measured in (the kind's work), and the
// rate's name. A finished result records the rate (runStages), so the
// next estimate of the same stage prices what it measured.
func (s *Session) stageWork(i int, cell experiments.Cell) (key string, units int64) {
	kind, ok := stageKindOf(s.c.Stages[i].Kind)
	if !ok || kind.work == nil {
		return "", 0
	}
	return "stage " + kind.name + " " + cell.Mechanism + s.searchShape(), kind.work(s, i, cell)
}

// attackTokens is the tokens of n of the analysis's texts, each cut to
// maxLen, at their mean length: what one privatization of the
// reconstruction attack's texts costs.
func (s *Session) attackTokens(cell experiments.Cell, n, maxLen int) int64 {
	docs := s.in.view(cell).splits["train"].Docs
	var total int64
	for _, d := range docs {
		total += int64(min(len(d), maxLen))
	}
	if len(docs) == 0 {
		return 0
	}
	return total * int64(n) / int64(len(docs))
}

// priceAnalysis adds an analysis cell's planned work to e.
func (s *Session) priceAnalysis(e *Estimate, cell experiments.Cell, rates map[string]rate, price pricer) {
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
	keys := analysisRateKeys(cell, s.searchShape())
	if r, ok := firstRate(rates, keys); ok {
		secs := float64(w.Units(r.Sampled)) / r.PerSec
		e.Seconds += secs
		if w.Varies != "" {
			e.Rough += secs
			e.RoughCells++
			e.RoughWhy = fmt.Sprintf("%s cells: %s", cell.Analysis, w.Varies)
		}
		return
	}
	if priv, _ := s.rateKeys(cell, 0); sampled {
		price(priv, w.Units(true), s.sameSearch(cell, true)...) // batched draws run at about the privatization rate
	} else if key := keys[len(keys)-1]; !slices.Contains(e.Unknown, key) {
		e.Unknown = append(e.Unknown, key)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
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
