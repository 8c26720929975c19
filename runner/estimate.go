package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

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
	// Seconds is the sum over the work with a recorded rate; Unknown
	// lists the work without one (no earlier run on this host measured
	// it), which Seconds leaves out.
	Seconds float64
	Unknown []string
	// Basis says where the rates come from.
	Basis string
}

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
// search: with the cell's mechanism setting (its parameters: what an
// exact mechanism's construction grows with, CusText's K), and with the
// mechanism alone, which prices settings not measured yet.
func (s *Session) analysisRateKeys(cell experiments.Cell) (setting, mechanism string) {
	shape := s.searchShape()
	mechanism = strings.TrimSpace("analysis "+cell.Analysis+" "+cell.Mechanism) + shape
	if cell.Mechanism == "" {
		return mechanism, mechanism
	}
	return "analysis " + cell.Analysis + " " + cell.Setting() + shape, mechanism
}

// searchShape names what a lookup costs: the candidate matrix and the
// search's scoring path (a rate measured on other vectors, or on the
// other path, would price the work several times off).
func (s *Session) searchShape() string {
	e := s.in.mech
	return fmt.Sprintf(" on %d×%d %s", e.Len(), e.Dim, knn.AutoScoring(s.dev, e.Dim))
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
			setting, mechanism := s.analysisRateKeys(r.Cell)
			rt := rate{float64(r.Provenance.WorkUnits) / secs, now, r.Analysis.Method != "exact"}
			all[host][setting], all[host][mechanism] = rt, rt
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

// constructRateKey names the speed of building the cell's mechanism
// setting's costly structure (CusText's mapping): builds per second.
func (s *Session) constructRateKey(cell experiments.Cell) string {
	return "construct " + cell.Setting() + s.searchShape()
}

// priceConstruction adds building the cell's mechanism's costly
// structure to e, once per setting, unless the cache holds it.
func (s *Session) priceConstruction(e *Estimate, cell experiments.Cell, rates map[string]rate, built map[string]bool) {
	key := s.constructRateKey(cell)
	if cell.Mechanism == "" || built[key] {
		return
	}
	built[key] = true
	space := &mech.Space{Emb: s.in.mech, CacheDir: filepath.Join(s.c.Cache, "mech")}
	if mech.Prebuilt(space, cell.Mechanism, cell.Params, s.in.counts) {
		return
	}
	if r, ok := rates[key]; ok && r.PerSec > 0 {
		e.Seconds += 1 / r.PerSec
	} else if !slices.Contains(e.Unknown, key) {
		e.Unknown = append(e.Unknown, key)
	}
}

// estimate counts the privatizations and trainings the todo cells need
// (what the caches lack; each once however many cells share it) and
// prices them at the rates recorded on this host.
func (s *Session) estimate(sum *Summary, todo []int, threads int) *Estimate {
	host, _ := os.Hostname()
	rates := readRates(s.c.Cache)[host]
	e := &Estimate{Basis: fmt.Sprintf("rates measured by earlier runs on %s (%s)", host, filepath.Join(s.c.Cache, ratesFile))}
	seen, built := map[string]bool{}, map[string]bool{}
	price := func(key string, n int64) {
		if r, ok := rates[key]; ok && r.PerSec > 0 {
			e.Seconds += float64(n) / r.PerSec
		} else if !slices.Contains(e.Unknown, key) {
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
				price(priv, n*int64(measures.Int("draws")))
			}
			key := s.c.CorpusKey(cell, split, s.in.sums)
			if seen[key] || exists(filepath.Join(s.c.Cache, "corpora", key+".gob.gz")) {
				continue
			}
			seen[key] = true
			s.priceConstruction(e, cell, rates, built)
			n := s.in.splits[split].tokens()
			e.Privatizations++
			e.Tokens += n
			price(priv, n)
		}
		key := s.c.ModelKey(cell, s.in.sums)
		if seen[key] || exists(filepath.Join(s.c.Cache, modelsDir, key, modelMetaFile)) {
			continue
		}
		seen[key] = true
		n := int64(s.c.Train.Epochs) * int64(len(s.in.splits["train"].Docs))
		e.Trainings++
		e.Examples += n
		price(train, n)
	}
	return e
}

// priceAnalysis adds an analysis cell's planned work to e.
func (s *Session) priceAnalysis(e *Estimate, cell experiments.Cell, rates map[string]rate, price func(string, int64)) {
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
	setting, key := s.analysisRateKeys(cell)
	for _, k := range []string{setting, key} {
		if r, ok := rates[k]; ok && r.PerSec > 0 {
			e.Seconds += float64(w.Units(r.Sampled)) / r.PerSec
			return
		}
	}
	if priv, _ := s.rateKeys(cell, 0); sampled {
		price(priv, w.Units(true)) // batched draws run at about the privatization rate
	} else if !slices.Contains(e.Unknown, key) {
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
