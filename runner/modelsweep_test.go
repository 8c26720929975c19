package runner

import (
	"context"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
)

// TestModelSweep: a model parameter given as a list runs every cell once
// per value, each point with its own baseline and model; the tables keep
// the points apart and compare each with its own baseline; a dry run
// counts them; select: best_by: valid keeps, per line, the point with the
// best validation accuracy and compares it with the baseline's chosen
// point, every point then in sweep.md. The keys of the config without a
// sweep are unchanged by the sweep's existence.
func TestModelSweep(t *testing.T) {
	dir := t.TempDir()
	path, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 8, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	load := loader(t, path)
	plain, swept := load(), load("model.hidden=[4, 8]")
	pc, sc := plain.Cells(), swept.Cells()
	if len(sc) != 2*len(pc) {
		t.Fatalf("%d cells swept over two hidden sizes, %d without", len(sc), len(pc))
	}
	// The point at the config's own value is the config's cell under
	// another name only where the key says so: hidden 8 is the fixture's,
	// so its cells' keys are the unswept config's.
	s, err := Open(context.Background(), plain, SessionOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var plainKeys []string
	for _, c := range pc {
		plainKeys = append(plainKeys, s.Key(c))
	}
	s.Close()
	s, err = Open(context.Background(), swept, SessionOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for _, c := range sc {
		if slices.Contains(plainKeys, s.Key(c)) {
			same++
			if c.ModelPoint() != "hidden=8" {
				t.Errorf("%s shares a key with the unswept config", c)
			}
		}
	}
	s.Close()
	if same != len(pc) {
		t.Errorf("%d of the hidden=8 point's %d cells keep the unswept keys", same, len(pc))
	}

	// A dry run prices every cell of the sweep, writing nothing.
	sum, err := Run(context.Background(), swept, Options{DryRun: true})
	if err != nil || sum.Estimate == nil || len(sum.Cells) != len(sc) {
		t.Fatalf("dry run of the sweep: %v, %d cells", err, len(sum.Cells))
	}

	sum = runConfig(t, path, "model.hidden=[4, 8]")
	out := swept.Output
	if sum.Trained == 0 {
		t.Fatal("no model trained")
	}
	_, rows, _, err := rundir.ReadTables(out)
	if err != nil {
		t.Fatal(err)
	}
	var recs []results.Record
	store, err := results.OpenStore(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range sum.Cells {
		r, ok, _ := store.Get(cs.Key)
		if ok {
			recs = append(recs, r)
		}
	}
	acc := func(model, mode string, seed uint64) float64 {
		for _, r := range recs {
			if r.Cell.ModelPoint() == model && r.Cell.Mode == mode && r.Cell.Seed == seed && r.Cell.Mechanism != "" == (mode != "none") {
				return r.Test.Accuracy
			}
		}
		return math.NaN()
	}
	lines := 0
	for _, r := range rows {
		if r.Model == "" {
			t.Errorf("line %s without its model point", results.Label(r))
		}
		if r.Mode != "test" {
			continue
		}
		lines++
		want := (acc(r.Model, "test", 1) - acc(r.Model, "none", 1) + acc(r.Model, "test", 2) - acc(r.Model, "none", 2)) / 2
		if math.Abs(r.Diff-want) > 1e-12 {
			t.Errorf("%s: Δ %v, against its own point's baseline %v", results.Label(r), r.Diff, want)
		}
	}
	if lines != 2 {
		t.Errorf("%d test-mode lines, want one per point", lines)
	}
	md, _ := os.ReadFile(filepath.Join(out, "tables", "results.md"))
	for _, want := range []string{"| ε | model | seeds |", "| hidden=4 |", "| hidden=8 |", "Δ and p compare it with the baseline of the same point"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("results.md lacks %q:\n%s", want, md)
		}
	}
	for _, p := range []string{"accuracy-model1.png", "accuracy-model2.png"} {
		if _, err := os.Stat(filepath.Join(out, "plots", p)); err != nil {
			t.Errorf("plot of a point: %v", err)
		}
	}

	// select: the same records, one line per condition.
	sel := runConfig(t, path, "model.hidden=[4, 8]", "select.best_by=valid")
	if sel.Ran != 0 {
		t.Errorf("select ran %d cells: it chooses among records", sel.Ran)
	}
	_, chosen, _, err := rundir.ReadTables(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(chosen) != len(rows)/2 {
		t.Fatalf("%d lines chosen of %d", len(chosen), len(rows))
	}
	var base results.Row
	for _, r := range chosen {
		if r.Mode == "none" {
			base = r
		}
	}
	for _, r := range chosen {
		if !r.Selected {
			t.Errorf("%s not marked chosen", results.Label(r))
		}
		for _, other := range rows {
			if other.Setting == r.Setting && other.Mode == r.Mode && other.Epsilon == r.Epsilon && other.ValidAccuracy > r.ValidAccuracy {
				t.Errorf("%s: chose %s (valid %v) over %s (valid %v)", results.Label(r), r.Model, r.ValidAccuracy, other.Model, other.ValidAccuracy)
			}
		}
		if r.Mode == "test" {
			want := (acc(r.Model, "test", 1) - acc(base.Model, "none", 1) + acc(r.Model, "test", 2) - acc(base.Model, "none", 2)) / 2
			if math.Abs(r.Diff-want) > 1e-12 {
				t.Errorf("%s: Δ %v, against the chosen baseline %v", results.Label(r), r.Diff, want)
			}
		}
		// The paired test compares the chosen line with the chosen
		// baseline, whichever points they are.
		if r.Mode != "none" && math.IsNaN(r.VsBaseline.P) {
			t.Errorf("%s (%s, baseline %s): no paired test against the chosen baseline", results.Label(r), r.Model, base.Model)
		}
	}
	md, _ = os.ReadFile(filepath.Join(out, "tables", "results.md"))
	sweep, err := os.ReadFile(filepath.Join(out, "tables", "sweep.md"))
	if err != nil || !strings.Contains(string(md), "(best valid ") || !strings.Contains(string(sweep), "| hidden=4 |") || !strings.Contains(string(sweep), "| hidden=8 |") {
		t.Errorf("results.md:\n%s\nsweep.md (%v):\n%s", md, err, sweep)
	}
}

// TestTrainSweep: a training setting given as a list is swept as a model
// parameter is: every cell once per value, each model trained with its
// point's setting (its record has that many epochs), the point at the
// config's own value keeping the unswept config's keys, and the resolved
// config reading back to the same cells and keys.
func TestTrainSweep(t *testing.T) {
	dir := t.TempDir()
	path, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 8, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	load := loader(t, path)
	keys := func(c *experiments.Config) map[string]string {
		s, err := Open(context.Background(), c, SessionOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		out := map[string]string{}
		for _, cell := range c.Cells() {
			out[cell.String()] = s.Key(cell)
		}
		return out
	}
	plain, swept := load(), load("train.epochs=[1, 2]", "train.patience=0")
	pk, sk := keys(plain), keys(swept)
	if len(sk) != 2*len(pk) {
		t.Fatalf("%d cells swept over two epoch counts, %d without", len(sk), len(pk))
	}
	same := 0
	for name, k := range sk {
		if slices.Contains(slices.Collect(maps.Values(pk)), k) {
			same++
			if !strings.Contains(name, "train.epochs=1") {
				t.Errorf("%s shares a key with the unswept config", name)
			}
		}
	}
	if same != len(pk) {
		t.Errorf("%d of the epochs=1 point's %d cells keep the unswept keys", same, len(pk))
	}

	// The resolved config writes the list and reads back to the same keys.
	b, err := swept.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "epochs: [1, 2]") {
		t.Errorf("resolved config lost the list:\n%s", b)
	}
	back, err := experiments.Parse(filepath.Join(dir, "resolved.yaml"), b, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rk := keys(back); !maps.Equal(rk, sk) {
		t.Errorf("the resolved config's keys differ from the config's")
	}

	// A dry run prices each point's epochs: 1 + 2 against the unswept 1.
	dry := func(c *experiments.Config) int64 {
		sum, err := Run(context.Background(), c, Options{DryRun: true})
		if err != nil || sum.Estimate == nil {
			t.Fatalf("dry run: %v", err)
		}
		return sum.Estimate.Examples
	}
	if p, s := dry(plain), dry(swept); p == 0 || s != 3*p {
		t.Errorf("dry run prices %d training examples for the sweep, %d without; want 3×", s, p)
	}

	sum := runConfig(t, path, "train.epochs=[1, 2]", "train.patience=0")
	store, err := results.OpenStore(swept.Output)
	if err != nil {
		t.Fatal(err)
	}
	points := map[string]bool{}
	for _, cs := range sum.Cells {
		r, ok, err := store.Get(cs.Key)
		if !ok || err != nil {
			t.Fatalf("%s: no record (%v)", cs.Cell, err)
		}
		want := 1
		if strings.Contains(r.Cell.ModelPoint(), "train.epochs=2") {
			want = 2
		}
		points[r.Cell.ModelPoint()] = true
		if len(r.Epochs) != want {
			t.Errorf("%s: trained %d epochs, want %d", r.Cell, len(r.Epochs), want)
		}
	}
	if len(points) != 2 {
		t.Errorf("records of points %v, want two", points)
	}
	md, _ := os.ReadFile(filepath.Join(swept.Output, "tables", "results.md"))
	for _, want := range []string{"| train.epochs=1 |", "| train.epochs=2 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("results.md lacks %q:\n%s", want, md)
		}
	}
	cells, _ := os.ReadFile(filepath.Join(swept.Output, "tables", "cells.csv"))
	if !strings.HasPrefix(string(cells), "setting,mechanism,train_epochs,") {
		t.Errorf("cells.csv's header: %.80s", cells)
	}
}

// TestModelSweepErrors: a sweep that cannot run is refused at the key.
func TestModelSweepErrors(t *testing.T) {
	dir := t.TempDir()
	path, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 8, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"model.hidden=[]"}, "model.hidden: an empty list sweeps nothing"},
		{[]string{"model.hidden=[4, 4]"}, "model.hidden lists 4 twice"},
		{[]string{"model.hidden=[4, 0]"}, "hidden"},
		{[]string{"select.best_by=valid"}, "no model parameter is a list"},
		{[]string{"model.hidden=[4, 8]", "select.best_by=test"}, `select.best_by = "test"`},
		{[]string{"train.epochs=[]"}, "train.epochs: an empty list sweeps nothing"},
		{[]string{"train.batch=[4, 4]"}, "train.batch lists 4 twice"},
		{[]string{"train.epochs=[1, 0]"}, "train.epochs = 0, want ≥ 1"},
		{[]string{"train.epochs=[1, 1.5]"}, "train.epochs.1: 1.5 is not an integer"},
		{[]string{"train.max_len=[[1]]"}, "train.max_len.0: want a single value"},
	} {
		_, err := experiments.Load(path, experiments.Options{Set: c.sets})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %v: %v, want %q", c.sets, err, c.want)
		}
	}
}
