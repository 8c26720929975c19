package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
)

// PlanName is the file of a run folder that lists the run's cells: each
// cell's record key and group, with the resolved config. Every run that
// runs cells writes it before the first one (each shard writes the same
// bytes), so that a partial or sharded run can be read, resumed and
// re-submitted without a manifest.
const PlanName = "plan.json"

// Plan is the content of plan.json.
type Plan struct {
	Config experiments.Config `json:"config"` // resolved
	Groups int                `json:"groups"`
	Cells  []CellStatus       `json:"cells"` // Status empty
}

// State is what a run folder holds: its plan, and for each cell whether
// its record is there (ok), there and failed, or missing; the results of
// stages are those of the last finished run (manifest.json) when its
// cells are the plan's.
type State struct {
	Dir    string
	Plan   Plan
	Cells  []CellStatus // Status: ok, failed or missing
	Stages []CellStatus
	// StageCells are the utility cells the stages ran (see Outcome).
	StageCells []CellStatus
	// Ok, Failed and Missing count the cells.
	Ok, Failed, Missing int
	// Manifest is the last finished run's manifest (nil: none yet).
	Manifest *Manifest

	store   *results.Store
	records []results.Record // the cells' records there, in plan order
}

// ReadState reads a run folder: plan.json (or, for runs written before
// it existed, the manifest's cell list) and the records of the cells.
func ReadState(dir string) (*State, error) {
	st := &State{Dir: dir}
	if b, err := xio.ReadFileMax(filepath.Join(dir, "manifest.json"), xio.MaxRecord); err == nil {
		var m Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "manifest.json"), err)
		}
		st.Manifest = &m
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	switch b, err := xio.ReadFileMax(filepath.Join(dir, PlanName), xio.MaxRecord); {
	case err == nil:
		if err := json.Unmarshal(b, &st.Plan); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, PlanName), err)
		}
	case errors.Is(err, fs.ErrNotExist) && st.Manifest != nil:
		st.Plan = Plan{Config: st.Manifest.Provenance.Resolved, Cells: st.Manifest.Summary.Cells}
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: not a run folder (no %s: xp run or xp slurm writes it when a run starts)", dir, PlanName)
	default:
		return nil, err
	}
	store, err := results.ReadStore(dir)
	if err != nil {
		return nil, err
	}
	st.store = store
	for _, cs := range st.Plan.Cells {
		r, ok, err := st.store.Get(cs.Key)
		if err != nil {
			return nil, err
		}
		if ok {
			st.records = append(st.records, r)
		}
		cs.Status, cs.Error = StatusOf(r, ok)
		if why, bad := st.store.Problem(cs.Key); !ok && bad {
			cs.Error = why // a damaged record is not "not run yet"
		}
		switch cs.Status {
		case "missing":
			st.Missing++
		case "ok":
			st.Ok++
		default:
			st.Failed++
		}
		st.Cells = append(st.Cells, cs)
	}
	if m := st.Manifest; m != nil && slices.Equal(KeysOf(m.Summary.Cells), KeysOf(st.Plan.Cells)) {
		st.Stages, st.StageCells = m.Summary.Stages, m.Summary.StageCells
	}
	return st, nil
}

// StatusOf is a cell's status from what the store holds for it.
func StatusOf(r results.Record, ok bool) (status, msg string) {
	switch {
	case !ok:
		return "missing", "no record: not run yet, or its process stopped before recording it"
	case r.Status == "ok":
		return "ok", ""
	}
	return "failed", r.Error
}

// KeysOf are the record keys of cells, in order.
func KeysOf(cells []CellStatus) []string {
	keys := make([]string, len(cells))
	for i, cs := range cells {
		keys[i] = cs.Key
	}
	return keys
}

// Records returns the records of the run's cells and stages that are
// there, in plan order, then those of the utility cells its stages ran.
func (st *State) Records() ([]results.Record, error) {
	stages, err := st.store.Records(slices.Concat(KeysOf(st.Stages), KeysOf(st.StageCells)))
	if err != nil {
		return nil, err
	}
	return append(slices.Clone(st.records), stages...), nil
}

// FromStage maps the keys of utility cells stages ran outside the plan to
// their stage (results.TableOptions.FromStage).
func FromStage(cells []CellStatus) map[string]string {
	m := map[string]string{}
	for _, cs := range cells {
		if cs.Stage != "" {
			m[cs.Key] = cs.Stage
		}
	}
	return m
}

// Unfinished returns the shards of n whose groups hold a cell without a
// successful record: the tasks to submit again.
func (st *State) Unfinished(n int) []int {
	return ShardsOf(st.Cells, n, func(cs CellStatus) bool { return cs.Status != "ok" })
}

// ShardsOf returns the shards of n whose groups hold a picked cell.
func ShardsOf(cells []CellStatus, n int, pick func(CellStatus) bool) []int {
	var out []int
	for _, cs := range cells {
		if pick(cs) {
			out = append(out, experiments.Shard(cs.Group, n))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ResolvedName is the resolved config's file in a run folder.
const ResolvedName = "config.yaml"

// CellStatus is one cell of a run's plan or outcome.
type CellStatus struct {
	Key    string           `json:"key"`
	Cell   experiments.Cell `json:"cell"`
	Group  int              `json:"group"`            // see experiments.Groups
	Status string           `json:"status,omitempty"` // cached, todo, ok, failed, missing, other-shard
	Error  string           `json:"error,omitempty"`
	// Stage is the kind of the stage that ran a cell outside the plan
	// (Outcome.StageCells).
	Stage string `json:"stage,omitempty"`
}

// Manifest is one finished run's summary in its folder (manifest.json):
// the provenance of the run, when it finished, how long it took and what
// it did.
type Manifest struct {
	Provenance results.Provenance `json:"provenance"`
	Finished   string             `json:"finished"`
	Seconds    float64            `json:"seconds"`
	Summary    Outcome            `json:"summary"`
}

// Outcome is what a run did, as its manifest records it.
type Outcome struct {
	Out    string       `json:"out"`
	Config string       `json:"config"` // the resolved config in the run folder
	Cells  []CellStatus `json:"cells"`
	Groups int          `json:"groups"`
	Reused int          `json:"reused"`
	Ran    int          `json:"ran"`
	Failed int          `json:"failed"`
	// Trained counts the models this run's cells trained; the others
	// evaluated a model from the cache (see experiments.ModelKey).
	Trained int `json:"trained"`
	// Missing counts the cells without a record: not run by a merge, or
	// left by a worker that stopped before recording them.
	Missing int `json:"missing,omitempty"`
	// Queued is true when a launcher queued the shards (a cluster's jobs)
	// instead of running them: their records come later.
	Queued bool     `json:"queued,omitempty"`
	Tables []string `json:"tables,omitempty"`
	Plots  []string `json:"plots,omitempty"`
	// Stages are the results of the config's stages, run after the cells.
	Stages []CellStatus `json:"stages,omitempty"`
	// StageCells are the utility cells outside the plan that stages
	// decided on and ran or reused (matched-privacy's at the ε found):
	// in cells.csv, not among the table's rows.
	StageCells []CellStatus `json:"stage_cells,omitempty"`
}

// ReadTables reads the last run in dir: its state, its utility table
// (nil for an analysis run without utility cells) and its analysis table,
// in the config's order.
func ReadTables(dir string) (st *State, rows []results.Row, stats []results.StatRow, err error) {
	st, err = ReadState(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	recs, err := st.Records()
	if err != nil {
		return nil, nil, nil, err
	}
	rows, stats = st.Tables(recs)
	return st, rows, stats, nil
}

// Tables are the run's utility table (nil for an analysis run without
// utility cells) and analysis table from its records (State.Records), in
// the config's order.
func (st *State) Tables(recs []results.Record) (rows []results.Row, stats []results.StatRow) {
	c := st.Plan.Config
	opt := TableOptions(&c)
	opt.FromStage = FromStage(st.StageCells)
	if c.HasUtilityCells() {
		rows = results.Table(recs, opt)
	}
	return rows, results.AnalysisTable(recs, opt.Order)
}

// TableOptions are how the config's tables are judged, labelled and
// ordered: its OOV threshold, the attacked attribute of its dataset, and
// its settings in the config's order (utility and analysis tables alike).
func TableOptions(c *experiments.Config) results.TableOptions {
	opt := results.TableOptions{MaxOOV: c.Checks.MaxOOV}
	for _, cell := range c.Cells() {
		if st := cell.Setting(); !slices.Contains(opt.Order, st) {
			opt.Order = append(opt.Order, st)
		}
	}
	if sp, err := datasets.SpecOf(c.Dataset.Name); err == nil {
		opt.Attacker = sp.Attacker
	}
	for _, p := range c.ModelPoints() {
		opt.Models = append(opt.Models, experiments.Cell{Model: p}.ModelPoint())
	}
	opt.Select = c.SelectModel != nil
	return opt
}

// Stale lists the record files of the folder that belong to no cell or
// stage of its plan: records of cells a re-planned run no longer has.
func (st *State) Stale() ([]string, error) {
	keep := map[string]bool{}
	for _, k := range slices.Concat(KeysOf(st.Cells), KeysOf(st.Stages), KeysOf(st.StageCells)) {
		keep[k] = true
	}
	files, err := filepath.Glob(filepath.Join(st.Dir, "cells", "*.json"))
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, p := range files {
		if !keep[strings.TrimSuffix(filepath.Base(p), ".json")] {
			stale = append(stale, p)
		}
	}
	return stale, nil
}

// Problems lists, one line each, the files of the run's records that are
// no usable record of its plan: damaged records and records of another
// key (their cells count as missing and run again), files xp did not
// write, and records of cells the plan does not have (Stale). Commands
// that read a run print them, so that none is passed over in silence.
func (st *State) Problems() ([]string, error) {
	var out []string
	if st.store != nil {
		out = st.store.Problems()
	}
	stale, err := st.Stale()
	if err != nil {
		return nil, err
	}
	for _, p := range stale {
		out = append(out, p+": a record of no cell of this run's plan (a re-planned run's, or another's); left alone")
	}
	return out, nil
}

// Unbound is the error of a run folder whose records are not bound to
// its plan: Path names the file, Why the first disagreement found.
type Unbound struct {
	Path, Why string
}

func (e *Unbound) Error() string { return e.Path + ": " + e.Why }

// Bound checks that the folder's records are what its plan says and
// nothing else, naming the first mismatch (*Unbound): the plan's cells
// are exactly the cells its resolved config lists, in order; each
// record's key is the one its own cell and inputs hash to under that
// config (experiments.Config.Key), and its cell is the plan's cell of
// that key; every cell's inputs (the data and vectors' checksums) are
// the same; and the records folder holds no record of another cell or
// stage (Stale). A record spliced in from another run, or a plan whose
// cell list was edited, fails it. Missing records are not checked here
// (Missing counts them).
func (st *State) Bound() error {
	plan := filepath.Join(st.Dir, PlanName)
	// The config as a user's file would make it: read back from JSON, its
	// numbers are float64 where a config's grid gives ints, and cells and
	// keys made from it would differ.
	y, err := st.Plan.Config.Resolved()
	if err != nil {
		return err
	}
	c, err := experiments.Parse(plan, y, experiments.Options{})
	if err != nil {
		return &Unbound{plan, fmt.Sprintf("its config does not load: %v", err)}
	}
	c.Device = st.Plan.Config.Device // resolved when the run planned
	cells := c.Cells()
	if len(cells) != len(st.Plan.Cells) {
		return &Unbound{plan, fmt.Sprintf("lists %d cells, its config %d", len(st.Plan.Cells), len(cells))}
	}
	for i, cs := range st.Plan.Cells {
		if !sameCell(cs.Cell, cells[i]) {
			return &Unbound{plan, fmt.Sprintf("cell %d is %s, its config's is %s", i+1, cs.Cell, cells[i])}
		}
	}
	byKey := make(map[string]int, len(st.Plan.Cells))
	for i, cs := range st.Plan.Cells {
		byKey[cs.Key] = i
	}
	var first *results.Record
	for i := range st.records {
		r := &st.records[i]
		path := filepath.Join(st.Dir, "cells", r.Key+".json")
		i, ok := byKey[r.Key]
		if !ok {
			return &Unbound{path, "a record of no cell of the plan"}
		}
		cell := cells[i] // as the config makes it: a cell read back from JSON may hash otherwise
		if !sameCell(r.Cell, st.Plan.Cells[i].Cell) {
			return &Unbound{path, fmt.Sprintf("records cell %s, the plan's cell of its key is %s", r.Cell, cell)}
		}
		if first == nil {
			first = r
		} else if r.Provenance.Inputs != first.Provenance.Inputs {
			return &Unbound{path, fmt.Sprintf("was made from other inputs than %s.json (data %.12s, vectors %.12s against %.12s, %.12s)",
				first.Key, r.Provenance.Inputs.Data, r.Provenance.Inputs.Embedding, first.Provenance.Inputs.Data, first.Provenance.Inputs.Embedding)}
		}
		if k := c.Key(cell, r.Provenance.Inputs); k != r.Key {
			return &Unbound{path, fmt.Sprintf("its cell and inputs hash to key %.12s under the plan's config, not to its own", k)}
		}
	}
	stale, err := st.Stale()
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		return &Unbound{stale[0], "a record of no cell or stage of the plan"}
	}
	return nil
}

// sameCell compares cells as their records write them (a cell read back
// from JSON holds float64 where a config's holds int).
func sameCell(a, b experiments.Cell) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// Complete reports whether the folder holds a finished run with nothing
// left to do: every cell of its plan has a successful record, its last
// run's manifest lists the same cells, and every stage result and stage
// cell that manifest names has a successful record too.
func (st *State) Complete() bool {
	m := st.Manifest
	if st.Missing+st.Failed > 0 || m == nil || !slices.Equal(KeysOf(m.Summary.Cells), KeysOf(st.Plan.Cells)) {
		return false
	}
	for _, cs := range slices.Concat(st.Stages, st.StageCells) {
		r, ok, err := st.store.Get(cs.Key)
		if err != nil || !ok || r.Status != "ok" {
			return false
		}
	}
	return true
}
