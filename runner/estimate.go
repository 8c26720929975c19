package runner

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
)

func newEstimator(s *Session, p *runPlan, store *results.Store, threads int) *estimator {
	host, _ := os.Hostname()
	all := s.rates.read()
	rates := maps.Clone(all[host])
	file := filepath.Join(s.c.Cache, ratesFile)
	basis := fmt.Sprintf("rates measured by earlier runs on %s (%s)", host, file)
	if len(rates) == 0 {
		rates = map[string]rate{}
		basis = fmt.Sprintf("rates measured here on samples: no earlier run on %s recorded any (%s)", host, file)
	}
	e := &Estimate{Basis: basis, RatesFile: file}
	if s.elsewhere != "" {
		gpu, hosts := gpuRates(all, host)
		for k, r := range gpu {
			if _, own := rates[k]; !own {
				rates[k] = r
			}
		}
		e.Elsewhere = fmt.Sprintf("the config's device, %s, is not on this host: its work is priced only at rates recorded on a GPU", s.elsewhere)
		if len(hosts) > 0 {
			e.Elsewhere += fmt.Sprintf(" (where this host recorded none, the newest of those recorded on %s, sharing this cache)", strings.Join(hosts, ", "))
		}
		e.Elsewhere += ", and none is measured here on the CPU"
	}
	return &estimator{s: s, p: p, store: store, threads: threads, rates: rates,
		e:    e,
		seen: map[string]bool{}, built: map[string]bool{}, drawn: map[string]bool{}}
}

// gpuRates are the rates that other hosts sharing the cache recorded on
// a GPU (their keys name it: onDevice), the newest of each where several
// did, for a GPU run planned on a host without one; hosts are those whose
// rates it took, sorted.
func gpuRates(all map[string]map[string]rate, self string) (map[string]rate, []string) {
	out, from := map[string]rate{}, map[string]string{}
	for h, rs := range all {
		if h == self {
			continue
		}
		for k, r := range rs {
			if !strings.HasSuffix(k, onDevice(gpuKind)) || r.PerSec <= 0 {
				continue
			}
			if old, ok := out[k]; !ok || r.When > old.When || (r.When == old.When && h < from[k]) {
				out[k], from[k] = r, h
			}
		}
	}
	var hosts []string
	for _, h := range from {
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	slices.Sort(hosts)
	return out, hosts
}

// estimate counts the privatizations and trainings the todo cells need
// (what the caches lack; each once however many cells share it) and
// prices them, first measuring on a small sample the rates no earlier
// run recorded (calibrate).
func (x *estimator) estimate(ctx context.Context, startup time.Duration) *Estimate {
	s, e := x.s, x.e
	cells := make([]experiments.Cell, len(x.p.todo))
	for k, i := range x.p.todo {
		cells[k] = x.p.cells[i].Cell
	}
	var measured []calibration
	if s.elsewhere == "" { // a sample timed on this CPU does not price a GPU's work
		measured = x.calibrate(ctx, x.rates, cells, x.threads)
	}
	for _, c := range measured {
		x.rates[c.key] = c.rate
		e.Calibrated = append(e.Calibrated, fmt.Sprintf("%s: %.4g/s on %s", c.key, c.rate.PerSec, c.on))
		e.CalibrationSeconds += c.seconds
	}
	measures := s.c.PrivacyMeasures()
	types := map[string]int64{} // split → its word types with a candidate vector
	for _, i := range x.p.todo {
		cell := x.p.cells[i].Cell
		if cell.Analysis != "" {
			e.Analyses++
			x.construction(cell)
			if g := drawGroup(s.c, cell); g != "" {
				if x.drawn[g] {
					continue // its draws are made by its group's first cell (common_noise)
				}
				x.drawn[g] = true
			}
			x.analysis(cell)
			continue
		}
		priv, train := s.rates.keys(cell, x.threads)
		for _, split := range Splits {
			if !cell.Privatizes(role(split)) {
				continue
			}
			if dk := s.c.DrawsKey(cell, s.in.sums) + " " + split; measures != nil && !x.seen[dk] {
				x.seen[dk] = true
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
				x.price(priv, n*int64(measures.Int("draws")), s.rates.sameSearch(cell, false)...)
			}
			key := s.c.CorpusKey(cell, split, s.in.sums)
			if x.seen[key] || exists(filepath.Join(s.c.Cache, "corpora", key+".gob.gz")) {
				continue
			}
			x.seen[key] = true
			if g := splitGroup(s.c, cell, split); g != "" {
				if x.seen[g] {
					continue // privatized with its group's first missing split (common_noise)
				}
				x.seen[g] = true
			}
			x.construction(cell)
			x.privatization(priv, cell, s.in.splits[split].tokens())
		}
		x.training(cell, train)
	}
	x.stages()
	if e.Seconds > 0 { // some work priced: the run starts and loads the inputs first, writes its outputs last
		e.Load = startup.Seconds() + s.loaded
		if r, ok := x.rates[outputsRate]; ok && r.PerSec > 0 {
			e.Outputs = float64(len(x.p.cells)) / r.PerSec
		}
		e.Seconds += e.Load + e.Outputs
	}
	return e
}

// stages adds the searching stages' work: each result the store lacks
// (keyed as runStages keys it, from its inputs' keys), one per group of
// the plan's analysis cells by mechanism setting and seed.
func (x *estimator) stages() {
	s, e := x.s, x.e
	byGroup := x.p.settingSeed(x.p.analysis)
	for i, st := range s.c.Stages {
		kind, ok := stageKindOf(st.Kind)
		if !ok || kind.work == nil {
			continue
		}
		for _, idx := range byGroup.groups {
			cells := make([]rundir.CellStatus, len(idx))
			for k, j := range idx {
				cells[k] = x.p.cells[j]
			}
			cell := cells[0].Cell
			keys := rundir.KeysOf(cells)
			if kind.baseline {
				b, ok := byGroup.baseline[cell.Seed]
				if !ok {
					continue
				}
				keys = append(keys, x.p.cells[b].Key)
			}
			stage := cell
			stage.Analysis, stage.Epsilon = st.Kind, 0
			if done, err := x.store.Done(s.c.StageKey(i, stage, keys)); err == nil && done {
				continue
			}
			e.Stages++
			key, units := s.stageWork(i, cell)
			if kind.lookups {
				e.StageLookups += units
			}
			if r, ok := x.rates[key]; ok && r.PerSec > 0 {
				e.Seconds += float64(units) / r.PerSec // measured by an earlier result of this stage
				continue
			}
			kind.price(x, stageGroup{i: i, cell: cell, cells: cells, units: units})
		}
	}
}
