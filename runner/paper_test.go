package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/experiments"
)

// TestPaperConfigs: every config under configs/paper validates, with and
// without the overrides of its "# Quick look:" line (what `make
// paper-quick` applies), and with a data root each one plans its sweep
// (`xp run --dry-run`), reading its dataset and vectors; the quick look
// runs fewer cells or smaller ones. A config whose data the root lacks
// (QNLI's train split here) is reported, not passed silently.
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
			sets, err := quickLook(string(text))
			if err != nil {
				t.Fatal(err)
			}
			quick, err := experiments.Load(p, experiments.Options{DataRoot: root, Set: append([]string{"cache=" + cache}, sets...)})
			if err != nil {
				t.Fatalf("quick look %q: %v", sets, err)
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
			qsum, err := Run(context.Background(), quick, Options{DryRun: true})
			if err != nil {
				t.Fatalf("quick look: %v", err)
			}
			if reflect.DeepEqual(quick.Cells(), c.Cells()) && reflect.DeepEqual(quick.AnalysisParams(), c.AnalysisParams()) && quick.Dataset == c.Dataset && quick.Train == c.Train && reflect.DeepEqual(quick.Stages, c.Stages) && len(qsum.Cells) == len(sum.Cells) {
				t.Errorf("the quick look %q reduces nothing", sets)
			}
		})
	}
}

// quickLook returns the --set overrides of a config's "# Quick look:"
// line (make paper-quick reads the same line).
func quickLook(text string) ([]string, error) {
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "# Quick look")
		if !ok {
			continue
		}
		_, rest, _ = strings.Cut(rest, ": ")
		f := strings.Fields(rest)
		if len(f) == 0 || len(f)%2 != 0 {
			return nil, fmt.Errorf("quick look %q: want --set key=value pairs", line)
		}
		var sets []string
		for i := 0; i < len(f); i += 2 {
			if f[i] != "--set" {
				return nil, fmt.Errorf("quick look %q: %q is not --set", line, f[i])
			}
			sets = append(sets, f[i+1])
		}
		return sets, nil
	}
	return nil, fmt.Errorf("no \"# Quick look: --set …\" line (make paper-quick needs one)")
}
