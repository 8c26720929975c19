package report

import (
	"path/filepath"

	"github.com/xp-nlp/xp/claims"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
)

// Run is one run folder as the page reads it: its state (plan, cells'
// statuses, the last manifest), its tables, the resolved config that ran
// and the provenance of its records.
type Run struct {
	Dir   string
	State *rundir.State
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
	// Label names the run on the page (default: its config's name); the
	// reproduction page names each run as the claims file does.
	Label string
}

// Read reads the run in dir.
func Read(dir string) (*Run, error) {
	st, rows, stats, err := rundir.ReadTables(dir)
	if err != nil {
		return nil, err
	}
	r := &Run{Dir: dir, State: st, Rows: rows, Stats: stats}
	if b, err := xio.ReadFileMax(filepath.Join(dir, rundir.ResolvedName), xio.MaxConfig); err == nil {
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

// Name is the run's label, or its config's name.
func (r *Run) Name() string {
	if r.Label != "" {
		return r.Label
	}
	return r.State.Plan.Config.Name
}

// Claims decides, on the runs given, the published claims (package
// claims) whose records they hold: those of the claims file given or, ""
// for it, of the claims file beside each run's config (claims.For), if
// any. A run holds a claims file's run when its plan is that run's config
// with its overrides; claims reading runs none of them holds are left out.
func Claims(runs []*Run, file string) ([]claims.Agreement, error) {
	byFile := map[string][]string{}
	var files []string
	for _, r := range runs {
		if r.Provenance == nil || r.Provenance.Config == "" {
			continue
		}
		f := file
		if f == "" {
			f = claims.For(r.Provenance.Config)
		}
		if f == "" {
			continue
		}
		if _, ok := byFile[f]; !ok {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], r.Dir)
	}
	var out []claims.Agreement
	for _, f := range files {
		cf, err := claims.Read(f)
		if err != nil {
			return nil, err
		}
		as, err := cf.DecideOn(byFile[f]...)
		if err != nil {
			return nil, err
		}
		out = append(out, as...)
	}
	return out, nil
}
