package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/results"
)

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
	c := st.Plan.Config
	opt := TableOptions(&c)
	if c.HasUtilityCells() {
		rows = results.Table(recs, opt)
	}
	return st, rows, results.AnalysisTable(recs, opt.Order), nil
}

// Agreements decides every claim of the claims file path (see
// results.Claim) on the run of its config: configs are named relative to
// the claims file's folder, and each config's run is read from the output
// folder the config names (relative to the current folder, as make paper
// runs them) or from the claim's run folder when it names one (a reduced
// run). A config whose run has no records gives verdicts "not run
// here"; a claims file naming a config that does not load is an error.
func Agreements(path string) ([]results.Agreement, error) {
	claims, err := results.ReadClaims(path)
	if err != nil {
		return nil, err
	}
	type run struct {
		dir   string
		rows  []results.Row
		stats []results.StatRow
		err   error
	}
	runs := map[string]run{}
	var out []results.Agreement
	for _, c := range claims {
		r, ok := runs[c.Config+"\x00"+c.Run]
		if !ok {
			cfg, err := experiments.Load(filepath.Join(filepath.Dir(path), c.Config), experiments.Options{})
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, c.Line(), err)
			}
			dir := cfg.Output
			if c.Run != "" {
				dir = c.Run
			}
			r.dir = dir
			if _, err := os.Stat(dir); err != nil {
				r.err = err
			} else {
				_, r.rows, r.stats, r.err = ReadTables(dir)
			}
			runs[c.Config+"\x00"+c.Run] = r
		}
		switch {
		case errors.Is(r.err, fs.ErrNotExist):
			out = append(out, results.Agreement{Claim: c, Verdict: results.NotRun, Reason: "no run in " + r.dir})
			continue
		case r.err != nil:
			out = append(out, results.Agreement{Claim: c, Verdict: results.NotRun, Reason: r.err.Error()})
			continue
		}
		out = append(out, results.Agree(c, r.rows, r.stats))
	}
	return out, nil
}
