package runner

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/torchrt"
)

// newProvenance describes this process and the config for every record
// it writes.
func newProvenance(c *experiments.Config, sums experiments.Inputs, threads int) (results.Provenance, error) {
	p := results.Provenance{Config: c.File(), Resolved: *c, Inputs: sums, GoVersion: runtime.Version(), Device: c.Device, RNG: mech.RNG}
	if c.File() != "" {
		sum, err := xio.SHA256File(c.File())
		if err != nil {
			return p, err
		}
		p.ConfigSHA256 = sum
	}
	info := torchrt.Collect()
	p.Gotch, p.Libtorch, p.Threads = info.GotchVersion, info.TorchVersion, torchrt.Threads()
	p.Git, p.GitDirty = gitState()
	p.Host, _ = os.Hostname()
	return p, nil
}

// gitState is the commit xp was built from (stamped by go build) or, for
// test binaries, of the working directory's repository.
func gitState() (string, bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev string
		var dirty bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			return rev, dirty
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	st, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), len(strings.TrimSpace(string(st))) > 0
}

// Manifest is one run's summary in the output folder.
type Manifest struct {
	Provenance results.Provenance `json:"provenance"`
	Finished   string             `json:"finished"`
	Seconds    float64            `json:"seconds"`
	Summary    Summary            `json:"summary"`
}

// writeOutputs writes manifest.json, the tables and the plots from every
// record in the store.
func writeOutputs(c *experiments.Config, store *results.Store, sum *Summary, prov results.Provenance, took time.Duration) error {
	recs, err := store.All()
	if err != nil {
		return err
	}
	keys := map[string]bool{}
	for _, cs := range sum.Cells {
		keys[cs.Key] = true
	}
	var mine []results.Record // records of this config's cells only
	for _, r := range recs {
		if keys[r.Key] {
			mine = append(mine, r)
		}
	}
	rows := results.Table(mine)
	if sum.Tables, err = results.WriteTables(c.Output, rows); err != nil {
		return err
	}
	if plots, err := results.Plot(c.Output, c.Name, rows); err == nil {
		sum.Plots = plots
	}
	m := Manifest{Provenance: prov, Finished: time.Now().UTC().Format(time.RFC3339), Seconds: took.Seconds(), Summary: *sum}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return xio.WriteFileAtomic(filepath.Join(c.Output, "manifest.json"), append(b, '\n'))
}
