package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sugarme/gotch"
	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/mech/knn"
	"github.com/xp-nlp/xp/results"
)

// outputsRate names the speed of writing a run's tables, plots and
// report, in cells per second.
const outputsRate = "write outputs"

// ratesFile holds, per host, the speeds earlier runs measured (see
// rateBook.keys): cache/rates.json. Only estimates read it.
const ratesFile = "rates.json"

// rateBook names the speeds a cell's work runs at on this host and keeps
// them in the cache's rates.json: execution writes it (observe, note),
// the estimate of a dry run reads it (read) and prices with its names.
type rateBook struct {
	c    *experiments.Config
	emb  *embedding.Embedding // the candidates searched: their shape names a rate
	dev  gotch.Device
	logf func(format string, args ...any)
}

type rate struct {
	PerSec float64 `json:"per_sec"`
	When   string  `json:"when"`
	// Sampled, for an analysis's rate: per draw (its cells sampled their
	// outputs), not per row.
	Sampled bool `json:"sampled,omitempty"`
}

// keys name the speeds that a cell's work runs at: privatizing with
// its mechanism (tokens/s) over these candidates with this search,
// training its model on this data (examples/s; the model's parameters,
// the sequence bound, batch, and the CPU's threads or the device's kind
// set it: a GPU's speed does not hang on the host's threads).
func (b *rateBook) keys(cell experiments.Cell, threads int) (privatize, train string) {
	if cell.Mechanism != "" {
		privatize = "privatize " + cell.Mechanism + b.shape()
	}
	m, _ := json.Marshal(experiments.ModelConfig{Kind: b.c.Model.Kind, Params: b.c.ModelParams(cell)}) // a swept parameter at the cell's value
	tc := b.c.TrainAt(cell)
	train = fmt.Sprintf("train %s %s max_len=%d batch=%d", b.c.Dataset.Name, m, tc.MaxLen, tc.Batch)
	if b.dev == gotch.CPU {
		train += fmt.Sprintf(" threads=%d", threads)
	}
	return privatize, train + onDevice(b.dev)
}

// analysisRateKeys name the speed of an analysis's cells (whole cells:
// the mechanism's construction included) over these candidates with this
// search, most specific first: the cell's mechanism setting (its
// parameters: what an exact mechanism's construction grows with,
// CusText's K) at its ε, the setting at any ε, the mechanism at the
// cell's ε, the mechanism at any ε. An estimate prices a cell at the
// first one measured. ε counts because an analysis's cost can depend on
// it: the query attack's vote needs more draws the closer the runner-up
// is to the word, which it is at small ε (TestAnalysisRateAtEpsilon); a
// sampled analysis's cost per draw hardly does,
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

// shape names what a lookup costs: the candidate matrix and the
// search's scoring path (a rate measured on other vectors, or on the
// other path, would price the work several times off).
func (b *rateBook) shape() string {
	return searchShape(b.emb.Len(), b.emb.Dim, b.dev)
}

// searchShape names n candidates of dim dimensions searched on device:
// the path that searches them there and, off the CPU, the device's kind
// (a GPU and a CPU without the kernels both score with float32 products,
// at different speeds).
func searchShape(n, dim int, device gotch.Device) string {
	return pathShape(n, dim, knn.AutoScoring(device, dim)) + onDevice(device)
}

// gpuKind is a GPU as a rate's key names it (onDevice): every CUDA
// device is one kind there.
var gpuKind = gotch.CudaBuilder(0)

// onDevice names a device off the CPU in a rate's key (" (cuda)"), and
// nothing on the CPU: the keys a host recorded there stay its keys.
func onDevice(device gotch.Device) string {
	if device == gotch.CPU {
		return ""
	}
	return " (cuda)"
}

func pathShape(n, dim int, path knn.Scoring) string {
	return fmt.Sprintf(" on %d×%d %s", n, dim, path)
}

// otherShapes are searchShape's names for the same candidates on
// the CPU's other scoring paths (none off the CPU): a host's rates may
// have been recorded on one that this xp no longer takes there
// (int8-avx2 replaced the float32 kernel on AVX2 CPUs).
func (b *rateBook) otherShapes() []string {
	e := b.emb
	if b.dev != gotch.CPU {
		return nil
	}
	var out []string
	cur := knn.AutoScoring(b.dev, e.Dim)
	for _, p := range knn.CPUScorings() {
		if p != cur {
			out = append(out, pathShape(e.Len(), e.Dim, p))
		}
	}
	return out
}

// read returns every host's recorded speeds (none where the file is
// missing or damaged: that only loses estimates).
func (b *rateBook) read() map[string]map[string]rate {
	all := map[string]map[string]rate{}
	if data, err := xio.ReadFileMax(filepath.Join(b.c.Cache, ratesFile), xio.MaxRecord); err == nil {
		json.Unmarshal(data, &all)
	}
	return all
}

// measuredBy are the speeds a finished cell's record measured: its
// analysis's work per second (construction left out), or its
// privatization's tokens and its training's examples per second.
func (b *rateBook) measuredBy(r results.Record) map[string]rate {
	out := map[string]rate{}
	if r.Status != "ok" {
		return out
	}
	switch p, t := b.keys(r.Cell, r.Provenance.Threads); {
	case r.Analysis != nil:
		if secs := r.Provenance.WallSeconds - r.Provenance.ConstructSeconds; r.Provenance.WorkUnits > 0 && secs > 0 {
			rt := rate{PerSec: float64(r.Provenance.WorkUnits) / secs, Sampled: r.Analysis.Method != "exact"}
			for _, k := range analysisRateKeys(r.Cell, b.shape()) {
				out[k] = rt
			}
		}
	default:
		if p != "" && r.Provenance.TokensPerSec > 0 {
			out[p] = rate{PerSec: r.Provenance.TokensPerSec}
		}
		if !r.Provenance.ModelReused && r.Provenance.ExamplesPerSec > 0 {
			out[t] = rate{PerSec: r.Provenance.ExamplesPerSec}
		}
	}
	return out
}

// note records one speed measured by this process (see observe).
func (b *rateBook) note(key string, r rate) {
	host, _ := os.Hostname()
	b.observe(host, map[string]rate{key: r})
}

// observe records speeds measured on host, stamped now, for later
// estimates: the one place rates are written (a cell's through
// measuredBy, a mechanism's construction, a stage result's, the
// outputs'). Processes sharing the cache may overwrite each other's
// update: a lost rate only costs an estimate.
func (b *rateBook) observe(host string, measured map[string]rate) {
	if len(measured) == 0 {
		return
	}
	all := b.read()
	if all[host] == nil {
		all[host] = map[string]rate{}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for k, r := range measured {
		r.When = now
		all[host][k] = r
	}
	if data, err := json.MarshalIndent(all, "", "  "); err == nil {
		if err := xio.WriteFileAtomic(filepath.Join(b.c.Cache, ratesFile), data); err != nil {
			b.logf("warning: rates for estimates: %v", err)
		}
	}
}

// constructKeys name the speed of building the cell's mechanism
// setting's costly structure (CusText's mapping), in builds per second:
// the setting's own, then the mechanism's (the last setting of it
// built), which prices a setting never built at a sibling's time
// (CusText's mappings take about as long whatever K and mapping:
// docs/performance.md).
func (b *rateBook) constructKeys(cell experiments.Cell) []string {
	shape := b.shape()
	return []string{"construct " + cell.Setting() + shape, "construct " + cell.Mechanism + shape}
}

// sameSearch names the rates that may price cell's work where its own
// mechanism has none on this host: those of the mechanisms with the same
// search per token (mech.SameSearch) on this scoring path, then, where
// the host recorded none, its own and theirs on the CPU's other paths
// (otherShapes); with analysis, each one's rates for the cell's
// analysis (at its ε, then at any) before its privatization rates.
func (b *rateBook) sameSearch(cell experiments.Cell, analysis bool) []string {
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
	add(others, b.shape())
	for _, shape := range b.otherShapes() {
		add(append([]string{cell.Mechanism}, others...), shape)
	}
	return keys
}
