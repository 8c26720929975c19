package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
)

func TestRunCachesAndResumes(t *testing.T) {
	dir := t.TempDir()
	path, err := fixture.Write(dir, fixture.Options{Train: 60, Test: 20, Epochs: 2, Epsilon: []float64{1, 50}, Seeds: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	load := loader(t, path)
	ctx := context.Background()
	first, err := Run(ctx, load(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 2 baseline cells + 2 ε × 2 modes × 2 seeds.
	if len(first.Cells) != 10 || first.Ran != 10 || first.Reused != 0 || first.Failed != 0 {
		t.Fatalf("first run: %d cells, %d ran, %d reused, %d failed", len(first.Cells), first.Ran, first.Reused, first.Failed)
	}
	store, err := results.OpenStore(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := store.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 10 {
		t.Fatalf("%d records, want 10", len(recs))
	}
	for _, r := range recs {
		if r.Status != "ok" || r.Test.Accuracy < 0 || r.Test.Accuracy > 1 || r.Test.N != 40 {
			t.Errorf("record %s: %+v", r.Cell, r.Test)
		}
		if r.Provenance.RNG == "" || r.Provenance.Inputs.Data == "" || r.Provenance.ConfigSHA256 == "" || r.Provenance.PeakRSSBytes == 0 {
			t.Errorf("record %s: provenance incomplete: %+v", r.Cell, r.Provenance)
		}
		if r.Cell.Mode != "none" && len(r.Privacy) == 0 {
			t.Errorf("record %s: no privacy report", r.Cell)
		}
	}
	rows := results.Table(recs, results.TableOptions{MaxOOV: metrics.DefaultMaxOOV})
	if rows[0].Setting != "none" || rows[0].Seeds != 2 || len(rows) != 5 {
		t.Errorf("table: %+v", rows)
	}
	for _, f := range []string{"manifest.json", "config.yaml", "tables/results.csv", "tables/results.md", "plots/accuracy.png", "plots/accuracy.svg", "plots/privacy.png", "plots/privacy.svg"} {
		if st, err := os.Stat(filepath.Join(dir, "out", f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}

	// The manifest carries the run's wall time, peak memory and data root
	// (they were 0, 0 and ""), and checksums without padding (the
	// embedding's had a trailing space).
	var m Manifest
	if b, err := os.ReadFile(filepath.Join(dir, "out", "manifest.json")); err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("manifest: %v", err)
	}
	if p := m.Provenance; p.WallSeconds <= 0 || p.PeakRSSBytes <= 0 || p.DataRoot == "" || p.Inputs.Embedding != strings.TrimSpace(p.Inputs.Embedding) {
		t.Errorf("manifest provenance: wall %v s, peak %d B, data root %q, embedding %q", p.WallSeconds, p.PeakRSSBytes, p.DataRoot, p.Inputs.Embedding)
	}

	// Same config: all served from the records.
	second, err := Run(ctx, load(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if second.Reused != 10 || second.Ran != 0 {
		t.Errorf("second run: %d reused, %d ran", second.Reused, second.Ran)
	}
	again, _ := store.All()
	for i := range recs {
		if again[i].Provenance.Started != recs[i].Provenance.Started || again[i].Test.Accuracy != recs[i].Test.Accuracy {
			t.Errorf("record %s rewritten", recs[i].Cell)
		}
	}

	// A new ε runs only its own cells (2 modes × 2 seeds); the baseline
	// and the ε = 1 and 50 cells are reused.
	third, err := Run(ctx, load("mechanisms.0.epsilon=[1, 50, 200]"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if third.Reused != 10 || third.Ran != 4 {
		t.Errorf("adding an ε: %d reused, %d ran (want 10, 4)", third.Reused, third.Ran)
	}
	// Changing the number of epochs changes every key.
	fourth, err := Run(ctx, load("train.epochs=1", "mechanisms.0.epsilon=[1]", "seeds=[1]"), Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if fourth.Reused != 0 || len(fourth.Cells) != 3 {
		t.Errorf("changed training: %d of %d cells cached", fourth.Reused, len(fourth.Cells))
	}
	// Its estimate prices the run's fixed costs, loading the inputs and
	// writing the outputs, at the earlier runs' rate (they were left out:
	// a 1.3 s run estimated at 0.3 s).
	if e := fourth.Estimate; e == nil || e.Load <= 0 || e.Outputs <= 0 || len(e.Unknown) > 0 || e.Seconds <= e.Load+e.Outputs {
		t.Errorf("changed training: estimate %+v, want the inputs' loading, the outputs' writing and the work priced", e)
	}
}

// TestRunIsReproducible: the same config and seed give bit-identical
// metrics in two fresh output folders (the corpus cache is also fresh).
func TestRunIsReproducible(t *testing.T) {
	var accs [2][]float64
	for i := range accs {
		dir := t.TempDir()
		path, err := fixture.Write(dir, fixture.Options{Train: 40, Test: 20, Epochs: 2, Epsilon: []float64{5}, Seeds: []int{3}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := experiments.Load(path, experiments.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(context.Background(), c, Options{}); err != nil {
			t.Fatal(err)
		}
		store, _ := results.OpenStore(c.Output)
		recs, _ := store.All()
		for _, r := range recs {
			accs[i] = append(accs[i], r.Test.Accuracy, r.Valid.Accuracy, r.Epochs[len(r.Epochs)-1].Loss)
		}
	}
	if len(accs[0]) != 9 || !equal(accs[0], accs[1]) {
		t.Errorf("two runs of one config: %v vs %v", accs[0], accs[1])
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRunReportsMissingFiles(t *testing.T) {
	dir := t.TempDir()
	path, err := fixture.Write(dir, fixture.Options{Train: 5, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := experiments.Load(path, experiments.Options{Set: []string{"embedding.path=missing.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), c, Options{})
	if err == nil || !strings.Contains(err.Error(), "missing.txt") || !strings.Contains(err.Error(), "xp.yaml") {
		t.Errorf("missing embedding: %v", err)
	}
	// The run stopped before it began: it leaves no empty output folder
	// behind (the writable check made one).
	if _, err := os.Stat(c.Output); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a run refused for a missing input left its output folder %s: %v", c.Output, err)
	}
}

// TestModelsShared: a sweep trains one model per distinct training input
// (the clean split of each seed, each privatized training split): the
// test-mode cells evaluate their seed's clean model and train and both
// share theirs. A cell evaluating a cached model scores exactly as the
// cell that trained it would, and a cell run again alone trains nothing.
func TestModelsShared(t *testing.T) {
	c, _ := fixtureConfig(t, fixture.Options{Train: 40, Test: 15, Epochs: 2, Epsilon: []float64{1, 50}, Seeds: []int{1}}, "apply=[none, train, test, both]")
	ctx := context.Background()
	sum, err := Run(ctx, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 1 baseline + 2 ε × 3 modes; models: clean + 2 privatized training splits.
	if len(sum.Cells) != 7 || sum.Ran != 7 || sum.Trained != 3 {
		t.Fatalf("%d cells, %d ran, %d models trained; want 7, 7, 3", len(sum.Cells), sum.Ran, sum.Trained)
	}
	if ents, _ := os.ReadDir(filepath.Join(c.Cache, "models")); len(ents) != 3 {
		t.Errorf("%d cached models, want 3", len(ents))
	}
	store, _ := results.OpenStore(c.Output)
	recs, _ := store.All()
	byCell := map[string]results.Record{}
	for _, r := range recs {
		byCell[r.Cell.String()] = r
	}
	base := byCell["baseline seed=1"]
	for name, want := range map[string]string{
		"laplace ε=1 test seed=1":  base.Model,
		"laplace ε=50 test seed=1": base.Model,
		"laplace ε=1 both seed=1":  byCell["laplace ε=1 train seed=1"].Model,
	} {
		r := byCell[name]
		if r.Model == "" || r.Model != want || !r.Provenance.ModelReused {
			t.Errorf("%s: model %.12s (reused %v), want %.12s", name, r.Model, r.Provenance.ModelReused, want)
		}
		if want == base.Model && !reflect.DeepEqual(r.Epochs, base.Epochs) {
			t.Errorf("%s: training history differs from the baseline's, which trained its model", name)
		}
	}
	if byCell["laplace ε=1 train seed=1"].Model == byCell["laplace ε=50 train seed=1"].Model || byCell["laplace ε=1 train seed=1"].Model == base.Model {
		t.Error("different training inputs share a model")
	}
	// A test-mode cell evaluated with the model just trained (a fresh
	// cache, the cell alone) scores as with the model read from the cache.
	c2 := c.Clone()
	c2.Cache, c2.Output = filepath.Join(t.TempDir(), "cache"), filepath.Join(t.TempDir(), "out")
	c2.Apply = []string{"test"}
	c2.Mechanisms[0].Epsilon = []float64{50}
	alone, err := Run(ctx, c2, Options{})
	if err != nil || alone.Trained != 1 {
		t.Fatalf("alone: %v, %d trained", err, alone.Trained)
	}
	s2, _ := results.OpenStore(c2.Output)
	r2, _ := s2.All()
	if want := byCell["laplace ε=50 test seed=1"]; len(r2) != 1 || r2[0].Provenance.ModelReused || !reflect.DeepEqual(r2[0].Test, want.Test) || r2[0].Key != want.Key {
		t.Errorf("trained here: %+v\nfrom the cache: %+v", r2[0].Test, want.Test)
	}
	// The cell's record removed: run again, it trains nothing.
	rerun := func(cell string) Summary {
		t.Helper()
		os.Remove(filepath.Join(c.Output, "cells", byCell[cell].Key+".json"))
		again, err := Run(ctx, c, Options{})
		if err != nil || again.Ran != 1 {
			t.Fatalf("rerun: %v, %d ran", err, again.Ran)
		}
		return again
	}
	if n := rerun("laplace ε=1 test seed=1").Trained; n != 0 {
		t.Errorf("rerun of a cell whose model is cached: %d trained", n)
	}
	// A damaged cached model is trained again and replaced: the next
	// rerun reads it.
	os.WriteFile(filepath.Join(c.Cache, "models", base.Model, "model.ot"), []byte("damaged"), 0o666)
	if n := rerun("laplace ε=1 test seed=1").Trained; n != 1 {
		t.Errorf("rerun over a damaged model: %d trained, want 1", n)
	}
	if n := rerun("laplace ε=50 test seed=1").Trained; n != 0 {
		t.Errorf("rerun after the repair: %d trained, want 0 (the damaged model was not replaced)", n)
	}
	// Another model's weights of the same shape (seed 2's baseline, the
	// same vocabulary) under the baseline's key — as a shared cache of
	// another version could hold them — are not used: the model is
	// trained again and the cell scores as before.
	c3 := c.Clone()
	c3.Output, c3.Seeds, c3.Apply = filepath.Join(t.TempDir(), "out"), []uint64{2}, []string{"none"}
	if _, err := Run(ctx, c3, Options{}); err != nil {
		t.Fatal(err)
	}
	s3, _ := results.OpenStore(c3.Output)
	r3, _ := s3.All()
	if len(r3) != 1 || r3[0].Model == base.Model {
		t.Fatalf("seed 2's baseline: %d records", len(r3))
	}
	foreign, err := os.ReadFile(filepath.Join(c.Cache, "models", r3[0].Model, "model.ot"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(c.Cache, "models", base.Model, "model.ot"), foreign, 0o666)
	if n := rerun("laplace ε=1 test seed=1").Trained; n != 1 {
		t.Errorf("rerun over foreign weights: %d trained, want 1", n)
	}
	again, _ := results.OpenStore(c.Output)
	if r, ok, _ := again.Get(byCell["laplace ε=1 test seed=1"].Key); !ok || !reflect.DeepEqual(r.Test, byCell["laplace ε=1 test seed=1"].Test) {
		t.Errorf("with foreign weights in the cache the cell scored %+v, want %+v", r.Test, byCell["laplace ε=1 test seed=1"].Test)
	}
}

// TestOutputOfAnotherConfig: a run refuses an output folder holding a run
// of another config file, naming both; the same file, edited, runs again
// there (a sweep grows that way).
func TestOutputOfAnotherConfig(t *testing.T) {
	c, dir := fixtureConfig(t, fixture.Options{Train: 5, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}, "apply=[none]", "mechanisms=[]")
	ctx := context.Background()
	if _, err := Run(ctx, c, Options{}); err != nil {
		t.Fatal(err)
	}
	grown, err := experiments.Load(c.File(), experiments.Options{Set: []string{"apply=[none]", "mechanisms=[]", "seeds=[1, 2]"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, grown, Options{}); err != nil {
		t.Errorf("the same config, edited: %v", err)
	}
	b, _ := os.ReadFile(c.File())
	other := filepath.Join(dir, "other.yaml")
	os.WriteFile(other, b, 0o666)
	c2, err := experiments.Load(other, experiments.Options{Set: []string{"apply=[none]", "mechanisms=[]"}})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(c.Output, "tables", "results.md"))
	_, err = Run(ctx, c2, Options{})
	if err == nil || !strings.Contains(err.Error(), "holds a run of another config ("+c.File()) || !strings.Contains(err.Error(), "this is "+other) {
		t.Errorf("another config in the folder: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(c.Output, "tables", "results.md")); string(after) != string(before) {
		t.Error("the refused run replaced the folder's table")
	}
}

// TestOutputOwned: a run writes only into a folder it owns. A folder of
// the user's files, a system folder and the user's home are refused and
// nothing in them changes (the user's report.html was replaced before);
// a run whose resolved config was damaged is identified by its plan and
// resumes with its records; with the plan damaged too, the message says
// how to keep the records.
func TestOutputOwned(t *testing.T) {
	c, dir := fixtureConfig(t, fixture.Options{Train: 5, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}, "apply=[none]", "mechanisms=[]")
	ctx := context.Background()
	mine := filepath.Join(dir, "mine")
	os.MkdirAll(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "report.html"), []byte("my page"), 0o644)
	// A user's folder holding names a run holds too is still theirs (it
	// counted as a run, and its report.html was replaced).
	theirs := filepath.Join(dir, "theirs")
	os.MkdirAll(filepath.Join(theirs, "cells"), 0o755)
	os.WriteFile(filepath.Join(theirs, "manifest.json"), []byte(`{"mine": true}`), 0o644)
	os.WriteFile(filepath.Join(theirs, "report.html"), []byte("my page"), 0o644)
	home, _ := os.UserHomeDir()
	for _, out := range []string{mine, theirs, "/etc", "/usr/share/xp-test", "/", home} {
		d, err := experiments.Load(c.File(), experiments.Options{Set: []string{"apply=[none]", "mechanisms=[]", "output=" + out}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(ctx, d, Options{}); err == nil || !strings.Contains(err.Error(), "output "+out) {
			t.Errorf("output %s: %v, want it refused", out, err)
		}
	}
	for _, d := range []string{mine, theirs} {
		if b, _ := os.ReadFile(filepath.Join(d, "report.html")); string(b) != "my page" {
			t.Errorf("the user's report.html in %s became %q", d, b)
		}
	}
	if entries, _ := os.ReadDir(mine); len(entries) != 1 {
		t.Errorf("the refused run wrote into the user's folder: %d entries", len(entries))
	}
	if _, err := os.Stat("/usr/share/xp-test"); err == nil {
		t.Error("a run made a folder inside /usr")
	}
	// A link to a system folder is that folder: refused as one (checked by
	// ownOutput alone, which writes nothing, so that a failure here
	// cannot write into the system).
	for _, target := range []string{"/usr/local", "/", "/etc"} {
		link := filepath.Join(dir, "link-"+strings.Trim(strings.ReplaceAll(target, "/", "-"), "-"))
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		outs := []string{link, filepath.Join(link, "new")}
		if target == "/" {
			outs = outs[:1] // a new folder inside / is the user's, as /new is
		}
		for _, out := range outs {
			d, err := experiments.Load(c.File(), experiments.Options{Set: []string{"apply=[none]", "mechanisms=[]", "output=" + out}})
			if err != nil {
				t.Fatal(err)
			}
			if err := ownOutput(d); err == nil || !strings.Contains(err.Error(), "system") {
				t.Errorf("output %s, a link to %s: %v, want it refused as a system folder", out, target, err)
			}
		}
	}
	// A damaged resolved config: the plan says whose run it is.
	sum, err := Run(ctx, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(c.Output, rundir.ResolvedName), []byte("name: [unclosed"), 0o644)
	again, err := Run(ctx, c, Options{})
	if err != nil || again.Reused != len(sum.Cells) {
		t.Errorf("a run with a damaged config.yaml: %v, %d of %d cells reused, want it resumed", err, again.Reused, len(sum.Cells))
	}
	os.WriteFile(filepath.Join(c.Output, rundir.ResolvedName), []byte("name: [unclosed"), 0o644)
	os.WriteFile(filepath.Join(c.Output, rundir.PlanName), []byte("{"), 0o644)
	if _, err := Run(ctx, c, Options{}); err == nil || !strings.Contains(err.Error(), "records in") || !strings.Contains(err.Error(), "are intact") {
		t.Errorf("config.yaml and plan.json damaged: %v, want how to keep the records", err)
	}
	recs, _ := filepath.Glob(filepath.Join(c.Output, "cells", "*.json"))
	if len(recs) != len(sum.Cells) {
		t.Errorf("%d records left of %d", len(recs), len(sum.Cells))
	}
}

// TestRunLocked: a run folder that another process runs is refused,
// naming that process, and nothing of it changes; shards of one sweep
// share the folder; once the other run ends the folder runs again.
func TestRunLocked(t *testing.T) {
	c, _ := fixtureConfig(t, fixture.Options{Train: 5, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}, "apply=[none]", "mechanisms=[]")
	ctx := context.Background()
	if err := os.MkdirAll(c.Output, 0o755); err != nil {
		t.Fatal(err)
	}
	release, err := lockOutput(c.Output, false) // another xp run on the folder
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(ctx, c, Options{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("is being run by process %d", os.Getpid())) {
		t.Errorf("a second run on a running folder: %v, want it refused naming the process", err)
	}
	if _, err := os.Stat(filepath.Join(c.Output, "cells")); err == nil {
		t.Error("the refused run wrote records")
	}
	if _, err := Run(ctx, c, Options{Shard: 0, Shards: 2}); err == nil {
		t.Error("a shard ran beside a whole run")
	}
	release()
	a, err := lockOutput(c.Output, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := lockOutput(c.Output, true)
	if err != nil {
		t.Errorf("two shards of one sweep: %v", err)
	} else {
		b()
	}
	if _, err := lockOutput(c.Output, false); err == nil {
		t.Error("a whole run beside a shard")
	}
	a()
	if _, err := Run(ctx, c, Options{}); err != nil {
		t.Errorf("after the other run ended: %v", err)
	}
}

// TestUserTable: a user's CSV with named columns and a seeded
// test_fraction runs end to end; the test split is the carved share of
// each label, and another split seed carves another one.
func TestUserTable(t *testing.T) {
	c, dir := fixtureConfig(t, fixture.Options{Train: 20, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}})
	ctx := context.Background()
	d, err := datasets.Load(ctx, "", "folder", datasets.Options{Path: filepath.Join(dir, "data", "corpus")})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("body,sentiment\n")
	for _, x := range d.Splits["train"] {
		fmt.Fprintf(&b, "%q,%s\n", x.Text, d.Labels[x.Label])
	}
	os.WriteFile(filepath.Join(dir, "data", "mine.csv"), []byte(b.String()), 0o666)
	run := func(seed string) results.Record {
		c2, err := experiments.Load(c.File(), experiments.Options{Set: []string{"dataset.name=table", "dataset.path=mine.csv", "dataset.text=body",
			"dataset.label=sentiment", "dataset.test_fraction=0.25", "dataset.split_seed=" + seed, "apply=[test]", "output=" + filepath.Join(dir, "out"+seed)}})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Run(ctx, c2, Options{})
		if err != nil || sum.Ran != 1 {
			t.Fatalf("run: %v %+v", err, sum)
		}
		store, _ := results.OpenStore(c2.Output)
		recs, _ := store.All()
		return recs[0]
	}
	r := run("1")
	// 20 documents per class, a quarter of each held out.
	if r.Status != "ok" || r.Test.N != 10 {
		t.Errorf("record: %s %s, %d test examples (want 10)", r.Status, r.Error, r.Test.N)
	}
	if other := run("2"); other.Provenance.Inputs.Data == r.Provenance.Inputs.Data {
		t.Error("split seeds 1 and 2 carved the same test split")
	}
}

// TestMechanismEmbedding: mechanism_embedding gives the mechanisms their
// own vectors (candidates, metric, out-of-vocabulary rule) while the
// classifier keeps embedding: a privatized split only holds the
// mechanism's words, the rest pass through as its OOV, and the model's
// coverage still counts the model's vectors.
func TestMechanismEmbedding(t *testing.T) {
	c, dir := fixtureConfig(t, fixture.Options{Train: 10, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}, "apply=[test]")
	b, err := os.ReadFile(filepath.Join(dir, "data", "vectors.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var good []string
	mechWords := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if w := strings.Fields(l)[0]; strings.HasPrefix(w, "good") {
			good, mechWords[w] = append(good, l), true
		}
	}
	os.WriteFile(filepath.Join(dir, "data", "mech.txt"), []byte(strings.Join(good, "\n")+"\n"), 0o666)
	c2, err := experiments.Load(c.File(), experiments.Options{Set: []string{"apply=[test]", "mechanism_embedding={path: mech.txt}"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := Open(ctx, c2, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cell := c2.Cells()[0]
	p, err := s.Split(ctx, cell, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	var oov int64
	for i, doc := range p.Docs {
		for j, w := range doc {
			orig := p.Original.Docs[i][j]
			switch {
			case !mechWords[orig]:
				oov++
				if w != orig {
					t.Fatalf("%q is not a mechanism word but became %q", orig, w)
				}
			case !mechWords[w]:
				t.Fatalf("%q became %q, which is not in the mechanism's vectors", orig, w)
			}
		}
	}
	if p.Report.OOV != oov || oov == 0 {
		t.Errorf("report OOV %d, want the %d tokens without a mechanism vector", p.Report.OOV, oov)
	}
	if s.Key(cell) == func() string { s0, _ := Open(ctx, c, SessionOptions{}); defer s0.Close(); return s0.Key(cell) }() {
		t.Error("the mechanism's vectors are not in the cell's key")
	}
	sum, err := Run(ctx, c2, Options{})
	if err != nil || sum.Ran != 1 {
		t.Fatalf("run: %v %+v", err, sum)
	}
	store, _ := results.OpenStore(c2.Output)
	recs, _ := store.All()
	if cov := recs[0].Coverage["test"]; cov.Vectors != cov.Tokens {
		t.Errorf("test coverage %+v: every token has a vector in the model's embedding", cov)
	}
}

// TestTrainingInterrupted: a training stopped by its context returns the
// context's error and frees its model (it closed the nil interface the
// failing return had set and panicked: xp run died with a stack trace
// instead of "interrupted: K of N cells recorded" about one Ctrl-C in
// four, TestInterruptSaysWhereItStopped).
func TestTrainingInterrupted(t *testing.T) {
	c, _ := fixtureConfig(t, fixture.Options{Train: 20, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}, "apply=[none]", "mechanisms=[]")
	s, err := Open(context.Background(), c, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cell := c.Cells()[0]
	splits := map[string]Split{}
	for _, name := range Splits {
		splits[name] = s.in.splits[name]
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m, tr, err := s.models.trainModel(ctx, cell, "k", splits, nil)
	if !errors.Is(err, context.Canceled) || m != nil || tr != nil {
		t.Errorf("cancelled training: %v, model %v, %v", err, m, tr)
	}
}

// TestCommonNoiseSplits: under common_noise the first cell that needs a
// privatized split privatizes it for every setting that draws its noise
// (Laplace and each Vickrey t at an ε and seed: mech.SharedPrivatize),
// their cells read theirs from the cache, and each cell's numbers equal
// a run of it alone; the dry run prices such a group's splits once.
func TestCommonNoiseSplits(t *testing.T) {
	const mechs = "mechanisms=[{name: laplace, epsilon: [1, 50]}, {name: vickrey, epsilon: [1, 50], grid: {t: [0.25, 1]}}]"
	opts := fixture.Options{Train: 30, Test: 10, Epochs: 1, Epsilon: []float64{1}, Seeds: []int{1}}
	c, _ := fixtureConfig(t, opts, "apply=[none, train, test, both]", mechs, "common_noise=true")
	ctx := context.Background()
	privatizations := map[bool]int{}
	for _, common := range []bool{false, true} {
		d := c.Clone()
		d.CommonNoise = common
		sum, err := Run(ctx, d, Options{DryRun: true})
		if err != nil || sum.Estimate == nil {
			t.Fatalf("dry run: %v", err)
		}
		privatizations[common] = sum.Estimate.Privatizations
	}
	if privatizations[false] == 0 || privatizations[true]*3 != privatizations[false] {
		t.Errorf("the dry run's privatized splits: %d without common_noise, %d with: want a third", privatizations[false], privatizations[true])
	}
	sum, err := Run(ctx, c, Options{})
	if err != nil || sum.Failed != 0 {
		t.Fatalf("run: %v, %d failed", err, sum.Failed)
	}
	store, _ := results.OpenStore(c.Output)
	recs, _ := store.All()
	byCell := map[string]results.Record{}
	for _, r := range recs {
		byCell[r.Cell.String()] = r
		// Laplace's cells come first in the plan: its train and test cells
		// privatize for all (its both cell reads theirs)
		if privatized := r.Provenance.TokensPerSec > 0; privatized != (r.Cell.Mechanism == "laplace" && r.Cell.Mode != "both") {
			t.Errorf("%s: privatized a split itself: %v", r.Cell, privatized)
		}
	}
	if len(byCell) != 19 {
		t.Fatalf("%d records, want 19", len(byCell))
	}
	ents, _ := os.ReadDir(filepath.Join(c.Cache, "corpora"))
	if want := privatizations[false]; len(ents) != want {
		t.Errorf("%d privatized splits cached, want %d", len(ents), want)
	}
	for _, name := range []string{"vickrey t=1 ε=1 both seed=1", "vickrey t=0.25 ε=50 test seed=1", "laplace ε=50 train seed=1"} {
		cell := byCell[name].Cell
		alone, _ := fixtureConfig(t, opts, "apply=[none, "+cell.Mode+"]", "common_noise=true",
			fmt.Sprintf("mechanisms=[{name: %s, epsilon: [%g], params: %s}]", cell.Mechanism, cell.Epsilon, flowParams(cell.Params)))
		if _, err := Run(ctx, alone, Options{}); err != nil {
			t.Fatal(err)
		}
		s2, _ := results.OpenStore(alone.Output)
		r2, _ := s2.All()
		var got *results.Record
		for i := range r2 {
			if r2[i].Cell.String() == name {
				got = &r2[i]
			}
		}
		if got == nil {
			t.Fatalf("run of %s alone: no record", name)
		}
		want := byCell[name]
		for _, r := range []*results.Record{got, &want} {
			for split, p := range r.Privacy {
				p.Candidates = "" // names the fixture's folder
				r.Privacy[split] = p
			}
		}
		if got.Key != want.Key || len(got.Privacy) == 0 || !reflect.DeepEqual(got.Privacy, want.Privacy) || !reflect.DeepEqual(got.Test, want.Test) {
			t.Errorf("%s: alone %.12s %+v %+v, beside its group %.12s %+v %+v", name, got.Key, got.Privacy, got.Test, want.Key, want.Privacy, want.Test)
		}
	}
}

// flowParams writes params as a YAML flow mapping ({} when none).
func flowParams(p map[string]any) string {
	var kv []string
	for k, v := range p {
		kv = append(kv, fmt.Sprintf("%s: %v", k, v))
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// TestFirstDryRunEstimates: on a host without recorded rates a dry run
// measures what it lacks on small samples and gives an estimate (it said
// "no time estimate: no rate recorded on this host"), writing nothing;
// where a rate is recorded, nothing is measured.
func TestFirstDryRunEstimates(t *testing.T) {
	c, _ := fixtureConfig(t, fixture.Options{Train: 30, Test: 10, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}, "apply=[none, train]")
	sum, err := Run(context.Background(), c, Options{DryRun: true})
	if err != nil || sum.Estimate == nil {
		t.Fatalf("dry run: %v", err)
	}
	e := sum.Estimate
	if e.Seconds <= 0 || len(e.Calibrated) != 2 || len(e.Unknown) != 0 {
		t.Errorf("first dry run: %v s, calibrated %q, unknown %q; want an estimate from 2 measured rates", e.Seconds, e.Calibrated, e.Unknown)
	}
	if _, err := os.Stat(filepath.Join(c.Cache, ratesFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dry run wrote %s: %v", ratesFile, err)
	}
	// A mechanism whose mapping is not cached is not built for a sample
	// (the first version of this asked a dry run's absent index and
	// panicked): it stays unpriced, the training is measured.
	cx, _ := fixtureConfig(t, fixture.Options{Train: 30, Test: 10, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}, "apply=[none, train]",
		"mechanisms=[{name: custext, epsilon: [1], params: {k: 3}}]")
	if sum, err := Run(context.Background(), cx, Options{DryRun: true}); err != nil || sum.Estimate == nil || len(sum.Estimate.Calibrated) != 1 || len(sum.Estimate.Unknown) == 0 {
		t.Errorf("CusText's first dry run: %v, %+v", err, sum.Estimate)
	}
	if _, err := Run(context.Background(), c, Options{}); err != nil {
		t.Fatal(err)
	}
	d := c.Clone()
	d.Output, d.Seeds = filepath.Join(t.TempDir(), "again"), []uint64{2} // new work, at recorded rates
	sum, err = Run(context.Background(), d, Options{DryRun: true})
	if err != nil || sum.Estimate == nil || len(sum.Estimate.Calibrated) != 0 || sum.Estimate.Seconds <= 0 {
		t.Errorf("dry run after a run: %v, %+v; want the recorded rates, nothing measured", err, sum.Estimate)
	}
}

// TestCacheOwned: a cache folder xp does not own is refused before
// anything is written: a system folder (as named or through a link), or
// a folder of the user's files (a rates.json of theirs among them would
// be replaced). xp's own cache is used again. ownCache writes nothing, so
// a failure here cannot write into the system.
func TestCacheOwned(t *testing.T) {
	c, dir := fixtureConfig(t, fixture.Options{Train: 5, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}, "apply=[none]", "mechanisms=[]")
	mine := filepath.Join(dir, "mine")
	os.MkdirAll(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "rates.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(mine, "thesis.tex"), []byte("%"), 0o644)
	link := filepath.Join(dir, "etc-link")
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	load := func(cache string) *experiments.Config {
		d, err := experiments.Load(c.File(), experiments.Options{Set: []string{"apply=[none]", "mechanisms=[]", "cache=" + cache}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, cache := range []string{"/etc", "/usr/share/xp-cache", link, filepath.Join(link, "xp"), mine} {
		if err := ownCache(load(cache)); err == nil || !strings.Contains(err.Error(), "cache "+cache) {
			t.Errorf("cache %s: %v, want it refused", cache, err)
		}
	}
	// Through Run: refused before the run writes its output.
	d := load(mine)
	if _, err := Run(context.Background(), d, Options{}); err == nil || !strings.Contains(err.Error(), "thesis.tex") {
		t.Errorf("a run with the user's folder as cache: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "rates.json")); string(b) != "{}" {
		t.Errorf("the user's rates.json became %q", b)
	}
	if _, err := os.Stat(d.Output); err == nil {
		t.Error("the refused run made its output folder")
	}
	// xp's own cache, made by a run, is used again.
	own := load(filepath.Join(dir, "cache"))
	if _, err := Run(context.Background(), own, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := ownCache(own); err != nil {
		t.Errorf("xp's own cache after a run: %v", err)
	}
}
