package report

import (
	"os"
	"path/filepath"

	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/runner"
)

// Run is one run folder as the page reads it: its state (plan, cells'
// statuses, the last manifest), its tables, the resolved config that ran
// and the provenance of its records.
type Run struct {
	Dir   string
	State *runner.State
	Rows  []results.Row     // the utility table (nil: an analysis run)
	Stats []results.StatRow // the analysis table
	// Config is the resolved config the run executed (the folder's
	// config.yaml; nil when missing).
	Config []byte
	// Provenance is the last finished run's (its manifest's) or, for a
	// run that has not finished, that of its first record (nil: none).
	Provenance *results.Provenance
	// Seconds is the run's wall time: the manifest's, or the sum of its
	// records' for a partial run.
	Seconds float64
}

// Read reads the run in dir.
func Read(dir string) (*Run, error) {
	st, rows, stats, err := runner.ReadTables(dir)
	if err != nil {
		return nil, err
	}
	r := &Run{Dir: dir, State: st, Rows: rows, Stats: stats}
	if b, err := os.ReadFile(filepath.Join(dir, runner.ResolvedName)); err == nil {
		r.Config = b
	}
	if m := st.Manifest; m != nil {
		p := m.Provenance
		r.Provenance, r.Seconds = &p, m.Seconds
		return r, nil
	}
	recs, err := st.Records()
	if err != nil {
		return nil, err
	}
	for i, rec := range recs {
		if i == 0 {
			p := rec.Provenance
			r.Provenance = &p
		}
		r.Seconds += rec.Provenance.WallSeconds
	}
	return r, nil
}

// Name is the run's config name.
func (r *Run) Name() string { return r.State.Plan.Config.Name }

// Claims decides the published claims (results.Claim) on the runs' records:
// those of the claims file given on the runs' configs, or, claims "", of
// the claims file beside each run's config (runner.ClaimsFor), if any.
// Runs whose config no claim names get none.
func Claims(runs []*Run, claims string) ([]results.Agreement, error) {
	byFile := map[string][]string{}
	var files []string
	for _, r := range runs {
		if r.Provenance == nil || r.Provenance.Config == "" {
			continue
		}
		f := claims
		if f == "" {
			f = runner.ClaimsFor(r.Provenance.Config)
		}
		if f == "" {
			continue
		}
		if _, ok := byFile[f]; !ok {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], r.Provenance.Config)
	}
	var out []results.Agreement
	for _, f := range files {
		as, err := runner.Agreements(f, byFile[f]...)
		if err != nil {
			return nil, err
		}
		out = append(out, as...)
	}
	return out, nil
}
