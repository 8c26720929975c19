package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/realdata"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/table"
)

// TestRealQuickstartSubset runs the quick-start config end to end on the
// real SST-2 and fastText vectors of the data root, shrunk by --set
// overrides (600 training sentences, 200 test sentences, one epoch), then
// runs it again: the second run must be served entirely from the records.
func TestRealQuickstartSubset(t *testing.T) {
	root := realdata.Root(t)
	dir := t.TempDir()
	sets := []string{"data=" + root, "dataset.train_limit=600", "dataset.test_limit=200", "train.epochs=1", "model.hidden=16",
		"mechanisms.0.epsilon=[25]", "seeds=[1]", "output=" + filepath.Join(dir, "out"), "cache=" + filepath.Join(dir, "cache"), "threads=0"}
	c, err := experiments.Load("../configs/sst2_quickstart.yaml", experiments.Options{Set: sets})
	if err != nil {
		t.Fatal(err)
	}
	first, err := Run(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Cells) != 3 || first.Ran != 3 || first.Failed != 0 {
		t.Fatalf("first run: %+v", first)
	}
	store, _ := results.OpenStore(c.Output)
	recs, err := store.All()
	if err != nil {
		t.Fatal(err)
	}
	rows := results.Table(recs, results.TableOptions{MaxOOV: metrics.DefaultMaxOOV})
	if len(rows) != 3 || rows[0].Setting != "none" {
		t.Fatalf("table: %+v", rows)
	}
	for _, r := range rows {
		if r.Seeds != 1 || !(r.Accuracy >= 0 && r.Accuracy <= 1) || !(r.MacroF1 >= 0 && r.MacroF1 <= 1) {
			t.Errorf("row %+v", r)
		}
	}
	t.Logf("\n%s", table.Markdown(rows))
	c2, _ := experiments.Load("../configs/sst2_quickstart.yaml", experiments.Options{Set: sets})
	second, err := Run(context.Background(), c2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if second.Reused != 3 || second.Ran != 0 {
		t.Errorf("second run: %d reused, %d ran", second.Reused, second.Ran)
	}
}
