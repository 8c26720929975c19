package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/vcs"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/report"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/table"
	"github.com/xp-nlp/xp/torchrt"
)

// newProvenance describes this process and the config for every record
// it writes. The config's checksum is of the bytes read when the run
// started (editing the file during the run changes nothing), the resolved
// checksum of the resolved config the run executes.
func newProvenance(s *Session, resolved []byte) results.Provenance {
	file, sum := s.c.Source()
	rs := sha256.Sum256(resolved)
	rec := s.c.Recorded()
	p := results.Provenance{Config: file, ConfigSHA256: sum, ResolvedSHA256: hex.EncodeToString(rs[:]), Resolved: rec,
		Inputs: s.in.sums, DataRoot: rec.Data, GoVersion: runtime.Version(), Device: s.c.Device, RNG: mech.RNG}
	info := torchrt.Collect()
	p.Gotch, p.Libtorch, p.Threads = info.GotchVersion, info.TorchVersion, torchrt.Threads()
	p.Git, p.GitDirty = vcs.Stamp()
	p.Host, _ = os.Hostname()
	p.Machine = torchrt.Machine()
	return p
}

// Manifest is one run's summary in the output folder.
type Manifest struct {
	Provenance results.Provenance `json:"provenance"`
	Finished   string             `json:"finished"`
	Seconds    float64            `json:"seconds"`
	Summary    Summary            `json:"summary"`
}

// writeOutputs writes manifest.json, the tables and the plots from the
// records of this config's cells.
func writeOutputs(c *experiments.Config, store *results.Store, sum *Summary, prov results.Provenance, took time.Duration) error {
	mine, err := store.Records(sum.RecordKeys())
	if err != nil {
		return err
	}
	// The utility cells stages ran outside the plan: in the utility
	// tables as the stages' lines, and in long.csv.
	extra, err := store.Records(rundir.KeysOf(sum.StageCells))
	if err != nil {
		return err
	}
	fromStage := rundir.FromStage(sum.StageCells)
	if c.IsAnalysis() {
		rows := results.AnalysisTable(mine, rundir.TableOptions(c).Order)
		sum.Stats = rows
		if sum.Tables, err = table.WriteAnalysisTables(c.Output, rows); err != nil {
			return fmt.Errorf("tables: %w", err)
		}
		if sum.Plots, err = report.PlotAnalysis(c.Output, c.Name, rows); err != nil {
			return fmt.Errorf("plots: %w", err)
		}
	}
	if c.HasUtilityCells() {
		// Utility configs, and the utility cells a utility-loss stage reads.
		tables, plots := sum.Tables, sum.Plots
		if err := writeUtility(c, slices.Concat(mine, extra), fromStage, sum); err != nil {
			return err
		}
		sum.Tables, sum.Plots = append(tables, sum.Tables...), append(plots, sum.Plots...)
	}
	long, err := table.WriteLongTable(c.Output, slices.Concat(mine, extra), fromStage)
	if err != nil {
		return fmt.Errorf("tables: %w", err)
	}
	sum.Tables = append(sum.Tables, long)
	// The run's own wall time and peak memory (the records carry each
	// cell's).
	prov.WallSeconds = took.Seconds()
	prov.PeakRSSBytes, _ = torchrt.PeakResidentBytes()
	m := Manifest{Provenance: prov, Finished: time.Now().UTC().Format(time.RFC3339), Seconds: took.Seconds(), Summary: *sum}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return xio.WriteFileAtomic(filepath.Join(c.Output, "manifest.json"), append(b, '\n'))
}

// writeUtility writes the utility table and plots of recs, the run's
// records and those of the utility cells its stages ran (fromStage).
func writeUtility(c *experiments.Config, recs []results.Record, fromStage map[string]string, sum *Summary) (err error) {
	opt := rundir.TableOptions(c)
	opt.FromStage = fromStage
	rows := results.Table(recs, opt)
	sum.Rows = rows
	if sum.Tables, err = table.WriteTables(c.Output, rows, recs, opt); err != nil {
		return fmt.Errorf("tables: %w", err)
	}
	if hasPrivatized(sum) {
		if sum.Plots, err = report.Plot(c.Output, c.Name, rows, report.PlotOptions{}); err != nil {
			return fmt.Errorf("plots: %w", err)
		}
	}
	return nil
}

// RecordKeys are the keys of every record the run's tables read: its
// cells' in sweep order, then its stages' results.
func (s *Summary) RecordKeys() []string {
	keys := s.Keys()
	for _, st := range s.Stages {
		keys = append(keys, st.Key)
	}
	return keys
}

// Keys are the record keys of the run's cells, in sweep order.
func (s *Summary) Keys() []string { return rundir.KeysOf(s.Cells) }

// hasPrivatized reports whether the sweep has a privatized cell with a
// result (a baseline-only sweep, or one whose privatized cells all
// failed, has nothing to plot against ε).
func hasPrivatized(sum *Summary) bool {
	for _, cs := range sum.Cells {
		if cs.Cell.Analysis == "" && cs.Cell.Mode != "none" && (cs.Status == "ok" || cs.Status == "cached") {
			return true
		}
	}
	return false
}

func writePlan(out string, c *experiments.Config, sum *Summary) error {
	p := rundir.Plan{Config: c.Recorded(), Groups: sum.Groups, Cells: slices.Clone(sum.Cells)}
	for i := range p.Cells {
		p.Cells[i].Status, p.Cells[i].Error = "", ""
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := xio.WriteFileAtomic(filepath.Join(out, rundir.PlanName), append(b, '\n')); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}
