package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
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
//
// With configs given, only the claims on those config files are decided
// (the others' runs are not read).
func Agreements(path string, configs ...string) ([]results.Agreement, error) {
	claims, err := results.ReadClaims(path)
	if err != nil {
		return nil, err
	}
	if len(configs) > 0 {
		claims = slices.DeleteFunc(claims, func(c results.Claim) bool {
			return !slices.ContainsFunc(configs, func(f string) bool { return xio.SamePath(f, filepath.Join(filepath.Dir(path), c.Config)) })
		})
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
			out = append(out, results.Agreement{Claim: c, Verdict: results.NotRun, Reason: "no run in " + r.dir, Dir: r.dir})
			continue
		case r.err != nil:
			out = append(out, results.Agreement{Claim: c, Verdict: results.NotRun, Reason: r.err.Error(), Dir: r.dir})
			continue
		}
		a := results.Agree(c, r.rows, r.stats)
		a.Dir = r.dir
		out = append(out, a)
	}
	return out, nil
}

// ClaimsName is the claims file's name (configs/published.yaml): the
// published values the paper configs beside it regenerate.
const ClaimsName = "published.yaml"

// ClaimsFor finds the claims file for a config file: ClaimsName in the
// config's folder or its parent ("" when there is none).
func ClaimsFor(config string) string {
	if config == "" {
		return ""
	}
	for _, dir := range []string{filepath.Dir(config), filepath.Dir(filepath.Dir(config))} {
		p := filepath.Join(dir, ClaimsName)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}
