package runner

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/rundir"
)

// TestPrepare: a preparation run writes the run's config and plan, runs
// no cell, and privatizes once the test splits that cells of different
// groups share (test and both of one ε and seed); the shards then find
// them in the cache.
func TestPrepare(t *testing.T) {
	dir := t.TempDir()
	path, err := fixture.Write(dir, fixture.Options{Train: 30, Test: 10, Epochs: 1, Epsilon: []float64{2}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := experiments.Load(path, experiments.Options{Set: []string{"apply=[none, test, both]"}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), c, Options{Prepare: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Groups != 2 || len(sum.Cells) != 3 || sum.Ran != 0 {
		t.Fatalf("prepare: %d groups, %d cells, %d ran", sum.Groups, len(sum.Cells), sum.Ran)
	}
	corpora, _ := filepath.Glob(filepath.Join(dir, "cache", "corpora", "*.gob.gz"))
	if len(corpora) != 1 {
		t.Errorf("prepared corpora %v, want the shared test split only", corpora)
	}
	st, err := rundir.ReadState(c.Output)
	if err != nil {
		t.Fatal(err)
	}
	if st.Missing != 3 || st.Plan.Groups != 2 || len(st.Unfinished(2)) != 2 {
		t.Errorf("state after prepare: %+v", st)
	}
	if _, err := os.Stat(filepath.Join(c.Output, rundir.ResolvedName)); err != nil {
		t.Error(err)
	}
	// The shards reuse the prepared split: its file is not rewritten.
	info, _ := os.Stat(corpora[0])
	for i := 0; i < 2; i++ {
		if _, err := Run(context.Background(), c, Options{Shard: i, Shards: 2}); err != nil {
			t.Fatal(err)
		}
	}
	if after, _ := os.Stat(corpora[0]); !after.ModTime().Equal(info.ModTime()) {
		t.Error("a shard privatized the prepared test split again")
	}
	if st, _ := rundir.ReadState(c.Output); st.Ok != 3 {
		t.Errorf("after both shards: %d ok", st.Ok)
	}
}

// TestPackageDocFiles: every file the package doc names exists (it named
// a workers.go deleted long before).
func TestPackageDocFiles(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`[a-z_]+\.go`).FindAllString(string(b), -1) {
		if m == "doc.go" {
			continue
		}
		if _, err := os.Stat(m); err != nil {
			t.Errorf("runner/doc.go names %s: %v", m, err)
		}
	}
}
