package results

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

func rec(mode string, eps float64, seed uint64, acc float64, status string) Record {
	c := experiments.Cell{Mode: mode, Seed: seed}
	r := Record{Key: fmt.Sprintf("%s-%v-%d", mode, eps, seed), Cell: c, Status: status, Test: metrics.Classification{Accuracy: acc, MacroF1: acc / 2}}
	if mode != "none" {
		r.Cell.Mechanism, r.Cell.Epsilon, r.Notion = "laplace", eps, spec.MetricDP
		r.Privacy = map[string]metrics.Privatization{"test": {Tokens: 100, Unchanged: 20, OOV: 5, Epsilon: eps}}
	}
	return r
}

// TestStoreShared: opening a store never deletes another live process's
// temporary (a shard of the same sweep writing a record); damaged and
// foreign records do not block reading, and are reported; files xp did
// not write are left alone.
func TestStoreShared(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(rec("none", 0, 1, 0.9, "ok")); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	host = strings.ReplaceAll(host, ".", "_")
	other := exec.Command("sleep", "30") // another live writer on this machine
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Process.Kill()
	dead := exec.Command("true")
	dead.Run()
	liveTemp := fmt.Sprintf(".k1.json.%s.%d.ab12.tmp", host, other.Process.Pid)
	deadTemp := fmt.Sprintf(".k2.json.%s.%d.cd34.tmp", host, dead.Process.Pid)
	for name, body := range map[string]string{
		liveTemp: "{half", deadTemp: "{half", "notes.txt": "mine",
		"damaged.json": `{"key": "damaged", "status": "o`, "foreign.json": `{"key": "someone-else", "status": "ok"}`,
	} {
		os.WriteFile(filepath.Join(s.Dir(), name), []byte(body), 0o666)
	}
	s, err = OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, kept := range map[string]bool{liveTemp: true, deadTemp: false, "notes.txt": true, "damaged.json": true} {
		if _, err := os.Stat(filepath.Join(s.Dir(), name)); (err == nil) != kept {
			t.Errorf("%s: kept=%v, want %v", name, err == nil, kept)
		}
	}
	all, err := s.All()
	if err != nil || len(all) != 1 {
		t.Fatalf("%d records, %v: a damaged or foreign record blocks reading", len(all), err)
	}
	if done, err := s.Done("damaged"); done || err != nil {
		t.Errorf("a damaged record counts as done (%v)", err)
	}
	problems := strings.Join(s.Problems(), "\n")
	for _, want := range []string{"damaged.json: damaged record", "foreign.json: holds the record of another key", "notes.txt: not written by xp; left alone"} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %q:\n%s", want, problems)
		}
	}
	// Running the cell again replaces the damaged record.
	r := rec("none", 0, 1, 0.9, "ok")
	r.Key = "damaged"
	if err := s.Put(r); err != nil {
		t.Fatal(err)
	}
	if done, _ := s.Done("damaged"); !done || strings.Contains(strings.Join(s.Problems(), "\n"), "damaged.json") {
		t.Error("the replaced record is not done, or still reported")
	}
	if err := s.Put(rec("test", 1, 1, 0, "failed")); err != nil {
		t.Fatal(err)
	}
	if done, _ := s.Done("test-1-1"); done {
		t.Error("a failed record counts as done")
	}
}

// TestTableThreshold: the table judges with the threshold it is given —
// 0 included, as a config's checks.max_oov: 0 means.
func TestTableThreshold(t *testing.T) {
	r := rec("test", 10, 1, 0.6, "ok") // 5% OOV
	for limit, want := range map[float64]int{0: 1, 0.05: 0, metrics.DefaultMaxOOV: 0} {
		if got := Table([]Record{r}, TableOptions{MaxOOV: limit})[0].Flags; len(got) != want {
			t.Errorf("max_oov %v: flags %q", limit, got)
		}
	}
}

// TestAnalysisTableOrder: analysis rows follow the config's settings
// (CusText Table 7's K = 5, 10, 20, 50, 100 came out as 10, 100, 20, 5, 50:
// sorted by name), then ε.
func TestAnalysisTableOrder(t *testing.T) {
	var recs []Record
	for _, k := range []int{100, 5, 20} {
		for _, eps := range []float64{3, 1} {
			a := &metrics.Analysis{}
			a.Add("p0", 0.5)
			recs = append(recs, Record{Cell: experiments.Cell{Analysis: "query-attack", Mechanism: "custext", Params: map[string]any{"k": k}, Epsilon: eps, Seed: 1}, Status: "ok", Analysis: a})
		}
	}
	order := []string{"custext k=5", "custext k=20", "custext k=100"}
	var got []string
	for _, r := range AnalysisTable(recs, order) {
		got = append(got, fmt.Sprintf("%s ε=%v", r.Setting, r.Epsilon))
	}
	want := []string{"custext k=5 ε=1", "custext k=5 ε=3", "custext k=20 ε=1", "custext k=20 ε=3", "custext k=100 ε=1", "custext k=100 ε=3"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}

// TestSeriesPooled: an analysis's per-word series are pooled over seeds
// (what the histograms of Feyisetan Fig. 2 draw).
func TestSeriesPooled(t *testing.T) {
	rows := AnalysisTable(histogramRecords(), nil)
	if got := rows[1].Series["N_w"]; len(got) != 6 || got[5] != 50 {
		t.Errorf("series pooled over seeds: %v", got)
	}
}

func histogramRecords() []Record {
	var recs []Record
	for _, eps := range []float64{1, 5} {
		for seed := uint64(1); seed <= 2; seed++ {
			a := &metrics.Analysis{Series: map[string][]metrics.Num{"N_w": {0, 1, metrics.Num(eps * 10)}, "S_w": {100, 90, 80}}}
			a.Add("N_w mean", eps)
			recs = append(recs, Record{Cell: experiments.Cell{Analysis: "plausible-deniability", Mechanism: "laplace", Epsilon: eps, Seed: seed}, Status: "ok", Analysis: a})
		}
	}
	return recs
}

// TestAnalysisTableInterval: a one-seed row keeps every interval its
// record gives — the range simulated votes leave open (closed ranges
// included) and a sampled statistic's interval over its draws —; a row
// over several seeds keeps none (its t-interval speaks) but the hull of
// the brackets its searches left open. Fails if an interval is dropped.
func TestAnalysisTableInterval(t *testing.T) {
	rec := func(seed uint64, eps float64) Record {
		a := &metrics.Analysis{Method: "exact distributions"}
		a.AddSimulated("N w", 977, 960, 990)
		a.AddSimulated("N v", 50, 50, 50) // simulated, the range closed: still not exact
		a.AddCI("E_M", 0.5, 0.4, 0.6)
		a.AddBracket("ε @ N_w 0.1", 14, 12+float64(seed), 16+float64(seed))
		return Record{Cell: experiments.Cell{Analysis: "query-attack", Mechanism: "custext", Epsilon: eps, Seed: seed}, Status: "ok", Analysis: a}
	}
	rows := AnalysisTable([]Record{rec(1, 1), rec(1, 2), rec(2, 2)}, nil)
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	if got := rows[0].Interval; len(got) != 4 || got["N w"] != [2]float64{960, 990} || got["N v"] != [2]float64{50, 50} || got["E_M"] != [2]float64{0.4, 0.6} {
		t.Errorf("one seed: intervals %v, want N w [960 990], N v [50 50], E_M [0.4 0.6] and the bracket", got)
	}
	if got := rows[1].Interval; got != nil {
		t.Errorf("two seeds: interval %v, want none", got)
	}
	if got := rows[1].Bracket["ε @ N_w 0.1"]; got != [2]float64{13, 18} {
		t.Errorf("two seeds: bracket %v, want the hull [13, 18]", got)
	}
}

// TestFailedNeverReplacesOk: a failed record of a cell whose successful
// record is there leaves the successful one (two processes on one folder:
// the later one's failure replaced the earlier one's result, and a cell
// that scored 0.4850 read "1 failed"); a failed record replaces a failed
// one, and a successful one replaces a failed one.
func TestFailedNeverReplacesOk(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ok := rec("none", 0, 1, 0.485, "ok")
	failed := rec("none", 0, 1, 0, "failed")
	failed.Key = ok.Key
	for _, c := range []struct {
		put  Record
		want string
	}{{ok, "ok"}, {failed, "ok"}} {
		if err := s.Put(c.put); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := s.Get(ok.Key); got.Status != c.want {
			t.Errorf("after putting a %s record: %s, want %s", c.put.Status, got.Status, c.want)
		}
	}
	s2, _ := OpenStore(t.TempDir())
	for _, c := range []struct {
		put  Record
		want string
	}{{failed, "failed"}, {failed, "failed"}, {ok, "ok"}} {
		s2.Put(c.put)
		if got, _, _ := s2.Get(ok.Key); got.Status != c.want {
			t.Errorf("after putting a %s record: %s, want %s", c.put.Status, got.Status, c.want)
		}
	}
}

// TestTestSetIntervals: the table's test-set interval, and its test
// against the baseline counting each example once over the seeds (pooled
// over seeds, the same examples counted as 6 independent pairs).
func TestTestSetIntervals(t *testing.T) {
	base := func(seed uint64, correct string) Record {
		return Record{Key: fmt.Sprint("b", seed), Cell: experiments.Cell{Mode: "none", Seed: seed}, Status: "ok",
			Test: metrics.Classification{N: len(correct), Accuracy: share(correct), Correct: correct}}
	}
	cell := func(seed uint64, correct string) Record {
		return Record{Key: fmt.Sprint("c", seed), Cell: experiments.Cell{Mechanism: "laplace", Epsilon: 1, Mode: "test", Seed: seed}, Status: "ok",
			Test: metrics.Classification{N: len(correct), Accuracy: share(correct), Correct: correct}}
	}
	// Seed 1: the cell loses 3 examples the baseline had; seed 2: it loses
	// 2 and wins 1 back; seed 3 has no baseline and does not count.
	rows := Table([]Record{base(1, "11111111"), cell(1, "00011111"), base(2, "11111110"), cell(2, "00111111"), cell(3, "00000000")}, TableOptions{})
	var got *Row
	for i := range rows {
		if rows[i].Mode == "test" {
			got = &rows[i]
		}
	}
	// Summed over seeds, examples 0 and 1 lose twice, 2 once, and 7 wins
	// once: 4 discordant examples, not 6 pooled pairs; 6 of the 16 sign
	// flips reach |Σ| ≥ 4.
	if got == nil || got.VsBaseline.Discordant != 4 || got.VsBaseline.Seeds != 2 || math.Abs(got.VsBaseline.P-6.0/16) > 1e-12 || got.PHolm != got.VsBaseline.P {
		t.Fatalf("paired test against the baseline: %+v", got)
	}
	if got.TestN != 8 || !(got.TestLo < got.Accuracy && got.Accuracy < got.TestHi) {
		t.Errorf("test-set interval [%v, %v] around %v over %d", got.TestLo, got.TestHi, got.Accuracy, got.TestN)
	}
	// Records without per-example results give no test at all, never p = 1.
	rows = Table([]Record{rec("none", 0, 1, 0.9, "ok"), rec("test", 10, 1, 0.6, "ok")}, TableOptions{})
	for _, r := range rows {
		if !math.IsNaN(r.VsBaseline.P) || !math.IsNaN(r.PHolm) {
			t.Errorf("%s: p %v (Holm %v) without per-example results", r.Mode, r.VsBaseline.P, r.PHolm)
		}
	}
}

func share(correct string) float64 {
	return float64(strings.Count(correct, "1")) / float64(len(correct))
}

// TestSelectPairsChosenPoints: under select the baseline's and a line's
// chosen model points may differ; Δ and the paired test then compare the
// two chosen lines (the test looked for a baseline of the line's own
// point, which select had dropped, and printed none).
func TestSelectPairsChosenPoints(t *testing.T) {
	mk := func(mode string, model float64, seed uint64, valid float64, correct string) Record {
		c := experiments.Cell{Mode: mode, Seed: seed, Model: map[string]any{"hidden": model}}
		if mode != "none" {
			c.Mechanism, c.Epsilon = "laplace", 5
		}
		return Record{Key: fmt.Sprint(mode, model, seed), Cell: c, Status: "ok", Valid: metrics.Classification{Accuracy: valid},
			Test: metrics.Classification{N: len(correct), Accuracy: share(correct), Correct: correct}}
	}
	recs := []Record{
		mk("none", 4, 1, 0.9, "11111111"), mk("none", 8, 1, 0.7, "11111100"), // the baseline chooses hidden=4
		mk("test", 4, 1, 0.5, "11110000"), mk("test", 8, 1, 0.6, "00111111"), // the line chooses hidden=8
	}
	rows := Table(recs, TableOptions{Select: true, Models: []string{"hidden=4", "hidden=8"}})
	if len(rows) != 2 || rows[0].Model != "hidden=4" || rows[1].Model != "hidden=8" {
		t.Fatalf("chosen: %+v", rows)
	}
	r := rows[1]
	if math.Abs(r.Diff-(0.75-1)) > 1e-12 || math.IsNaN(r.VsBaseline.P) || r.VsBaseline.Discordant != 2 {
		t.Errorf("Δ %v, paired %+v; want −0.25 against the chosen baseline, 2 discordant examples", r.Diff, r.VsBaseline)
	}
}

// TestSharesSameBits: a record's shares sum its splits in one order, so
// that cells.csv and the tables print the same bits every time (they
// summed a map in Go's random order, and the per-type rate of a cell
// with three splits changed in its last digit from one run to the next).
func TestSharesSameBits(t *testing.T) {
	r := Record{Privacy: map[string]metrics.Privatization{}, Measures: map[string]metrics.Analysis{}}
	for i, split := range []string{"test", "train", "valid", "extra"} {
		x := []float64{1e16, 1, 1e-3, 1}[i] // sums that depend on the order
		r.Privacy[split] = metrics.Privatization{Tokens: 10, Types: 1, TypeUnchanged: x}
		r.Measures[split] = metrics.Analysis{Stats: []metrics.Stat{{Name: "recovery", Value: metrics.Num(x)}}}
	}
	first := SharesOf(r)
	for range 200 {
		if got := SharesOf(r); got.TypeUnchanged != first.TypeUnchanged || got.Recovery != first.Recovery {
			t.Fatalf("shares of one record differ between calls: %v then %v", first, got)
		}
	}
}
