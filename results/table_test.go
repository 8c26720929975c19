package results

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/models"
)

func rec(mode string, eps float64, seed uint64, acc float64, status string) Record {
	c := experiments.Cell{Mode: mode, Seed: seed}
	r := Record{Key: fmt.Sprintf("%s-%v-%d", mode, eps, seed), Cell: c, Status: status, Test: models.Metrics{Accuracy: acc, MacroF1: acc / 2}}
	if mode != "none" {
		r.Cell.Mechanism, r.Cell.Epsilon = "laplace", eps
		r.Privacy = map[string]mech.Report{"test": {Tokens: 100, Unchanged: 20, OOV: 5}}
	}
	return r
}

func TestTable(t *testing.T) {
	rows := Table([]Record{
		rec("test", 10, 1, 0.6, "ok"), rec("test", 10, 2, 0.8, "ok"), rec("test", 10, 3, 0, "failed"),
		rec("none", 0, 1, 0.9, "ok"), rec("train", 1, 1, 0.5, "ok"), rec("test", 1, 1, 0.55, "ok"),
	})
	want := []struct {
		mode string
		eps  float64
	}{{"none", 0}, {"train", 1}, {"test", 1}, {"test", 10}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	for i, w := range want {
		if rows[i].Mode != w.mode || rows[i].Epsilon != w.eps {
			t.Errorf("row %d: %s ε=%v, want %s ε=%v", i, rows[i].Mode, rows[i].Epsilon, w.mode, w.eps)
		}
	}
	r := rows[3]
	if r.Seeds != 2 || r.Failed != 1 || math.Abs(r.Accuracy-0.7) > 1e-12 || math.Abs(r.AccSD-math.Sqrt(0.02)) > 1e-12 || math.Abs(r.Unchanged-0.25) > 1e-12 {
		t.Errorf("aggregate: %+v", r)
	}
	md := Markdown(rows)
	for _, s := range []string{"| none | none | — | 1 | 0.9000 |", "| laplace | test | 10 | 2 (1 failed) | 0.7000 ± 0.1414 |", "25.0%"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
	var csv strings.Builder
	if err := WriteCSV(&csv, rows); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(csv.String()), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[0], "setting,mode,epsilon,seeds") {
		t.Errorf("csv:\n%s", csv.String())
	}
	dir := t.TempDir()
	paths, err := Plot(dir, "t", rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.Size() < 1000 {
			t.Errorf("plot %s: %v", p, err)
		}
	}
	if len(paths) != 2 || filepath.Ext(paths[0]) != ".png" || filepath.Ext(paths[1]) != ".svg" {
		t.Errorf("plots %v", paths)
	}
}

func TestStoreAtomicAndClean(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(rec("none", 0, 1, 0.9, "ok")); err != nil {
		t.Fatal(err)
	}
	// A leftover of an interrupted write is removed on open.
	os.WriteFile(filepath.Join(s.Dir(), ".tmp-123"), []byte("{trunc"), 0o644)
	s, _ = OpenStore(dir)
	all, err := s.All()
	if err != nil || len(all) != 1 {
		t.Fatalf("%d records, %v", len(all), err)
	}
	if ents, _ := os.ReadDir(s.Dir()); len(ents) != 1 {
		t.Errorf("%d files in the store, want 1", len(ents))
	}
	if done, _ := s.Done("none-0-1"); !done {
		t.Error("record not found as done")
	}
	if err := s.Put(rec("test", 1, 1, 0, "failed")); err != nil {
		t.Fatal(err)
	}
	if done, _ := s.Done("test-1-1"); done {
		t.Error("a failed record counts as done")
	}
}

func ExampleMarkdown() {
	rows := Table([]Record{
		{Key: "a", Cell: experiments.Cell{Mode: "none", Seed: 1}, Status: "ok", Test: models.Metrics{Accuracy: 0.9, MacroF1: 0.89}},
		{Key: "b", Cell: experiments.Cell{Mechanism: "laplace", Epsilon: 10, Mode: "test", Seed: 1}, Status: "ok", Test: models.Metrics{Accuracy: 0.7, MacroF1: 0.68}},
	})
	fmt.Print(Markdown(rows))
	// Output:
	// | mechanism | mode | ε | seeds | accuracy | macro-F1 | unchanged tokens |
	// |---|---|---:|---:|---:|---:|---:|
	// | none | none | — | 1 | 0.9000 | 0.8900 | — |
	// | laplace | test | 10 | 1 | 0.7000 | 0.6800 | — |
}
