package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/experiments"
)

// TestPaperConfigs: every config under configs/paper validates, and with
// a data root each one plans its sweep (`xp run --dry-run`), reading its
// dataset and vectors. A config whose data the root lacks (QNLI's train
// split here) is reported, not passed silently.
func TestPaperConfigs(t *testing.T) {
	paths, err := filepath.Glob("../configs/paper/*.yaml")
	if err != nil || len(paths) < 14 {
		t.Fatalf("%d paper configs (%v), want ≥ 14", len(paths), err)
	}
	root := os.Getenv(datasets.EnvRoot)
	cache := t.TempDir()
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			c, err := experiments.Load(p, experiments.Options{DataRoot: root, Set: []string{"cache=" + cache}})
			if err != nil {
				t.Fatal(err)
			}
			text, _ := os.ReadFile(p)
			if !strings.HasPrefix(string(text), "# Regenerates: ") {
				t.Error("the config does not open with the item it regenerates")
			}
			if root == "" {
				t.Skipf("validated; no data root ($%s) for the dry run", datasets.EnvRoot)
			}
			if c.Dataset.Name == "qnli" {
				if _, err := os.Stat(filepath.Join(root, "qnli", "train.tsv")); err != nil {
					t.Skip("validated; qnli/train.tsv is not in the data root (GLUE's QNLIv2.zip has it)")
				}
			}
			sum, err := Run(context.Background(), c, Options{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Cells) == 0 {
				t.Error("no cells")
			}
		})
	}
}
