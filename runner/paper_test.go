package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/claims"
	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/realdata"
	"github.com/xp-nlp/xp/results"
)

// TestPaperConfigs: every config under configs/paper validates, with and
// without the overrides of its "# Quick look:" line (what `make
// paper-quick` applies), and with a data root each one plans its sweep
// (`xp run --dry-run`), reading its dataset and vectors; the quick look
// runs fewer cells or smaller ones. A config whose data the root lacks
// (QNLI's train split here) is reported, not passed silently. The dry
// runs write nothing: their cache, given the vectors' binary caches
// (realCache), is left as it was, and their output is not created
// (unchangedByDryRuns). The configs are planned in parallel.
func TestPaperConfigs(t *testing.T) {
	paths, err := filepath.Glob("../configs/paper/*.yaml")
	if err != nil || len(paths) < 14 {
		t.Fatalf("%d paper configs (%v), want ≥ 14", len(paths), err)
	}
	root := os.Getenv(datasets.EnvRoot)
	cache, out := realCache(t, root), filepath.Join(t.TempDir(), "out")
	unchangedByDryRuns(t, cache, out)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			c, err := experiments.Load(p, experiments.Options{DataRoot: root, Set: []string{"cache=" + cache, "output=" + out}})
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
			quick, err := experiments.Load(p, experiments.Options{DataRoot: root, Set: append([]string{"cache=" + cache, "output=" + out}, sets...)})
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
			if ck, _ := c.Model.Params["checkpoint"].(string); usesPieces(c) {
				if _, err := os.Stat(c.Path(ck)); err != nil {
					// The paper's BERT is the user's to bring: the rest of the
					// config is dry-run on the biLSTM variant the claims file
					// declares, and the BERT run itself says it needs the
					// checkpoint.
					t.Logf("%s is not in the data root: dry-running the biLSTM variant", ck)
					if _, err := Run(context.Background(), c, Options{DryRun: true}); !errors.Is(err, ErrNoCheckpoint) || !strings.Contains(err.Error(), "xp data get bert-base-uncased") {
						t.Errorf("without its checkpoint: %v, want ErrNoCheckpoint naming how to fetch it", err)
					}
					variant := []string{"model={kind: bilstm, hidden: 128, dropout: 0.5}", "train={epochs: 2, batch: 64, max_len: 64}"}
					if c, err = experiments.Load(p, experiments.Options{DataRoot: root, Set: append([]string{"cache=" + cache, "output=" + out}, variant...)}); err != nil {
						t.Fatal(err)
					}
					if quick, err = experiments.Load(p, experiments.Options{DataRoot: root, Set: append(append([]string{"cache=" + cache, "output=" + out}, variant...), sets...)}); err != nil {
						t.Fatal(err)
					}
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
			if reflect.DeepEqual(quick.Cells(), c.Cells()) && reflect.DeepEqual(quick.AnalysisParams(), c.AnalysisParams()) && reflect.DeepEqual(quick.Dataset, c.Dataset) && reflect.DeepEqual(quick.Train, c.Train) && reflect.DeepEqual(quick.Stages, c.Stages) && len(qsum.Cells) == len(sum.Cells) {
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

// TestConfigsDryRun: every config of configs/ (the examples the docs
// give), and a utility sweep of 1-Diffractor and TEM, plans its sweep
// with a data root and writes nothing doing so — pricing 1-Diffractor's
// privatization builds its structure on a sample, which once wrote it
// into the cache.
func TestConfigsDryRun(t *testing.T) {
	paths, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(paths) < 4 {
		t.Fatalf("%d configs (%v), want ≥ 4", len(paths), err)
	}
	root := realdata.Root(t)
	sweep := filepath.Join(t.TempDir(), "diffractor_utility.yaml")
	if err := os.WriteFile(sweep, []byte(`name: diffractor-utility
dataset: {name: sst2, test: dev, train_limit: 600, test_limit: 200}
embedding: {path: embeddings/fasttext-sg-xpcorpus-300d.vec.gz}
mechanisms:
  - {name: diffractor, epsilon: [0.1, 1]}
  - {name: tem, epsilon: [1]}
apply: [none, train, test]
seeds: [1, 2]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	paths = append(paths, sweep)
	cache, out := realCache(t, root), filepath.Join(t.TempDir(), "out")
	unchangedByDryRuns(t, cache, out)
	for _, p := range paths {
		if filepath.Base(p) == claims.FileName {
			continue
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			c, err := experiments.Load(p, experiments.Options{DataRoot: root, Set: []string{"cache=" + cache, "output=" + out}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Run(context.Background(), c, Options{DryRun: true}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// unchangedByDryRuns fails the test, once it and its subtests have run,
// when its dry runs wrote into the cache folder (which holds only the
// vectors' caches it was given) or created the output folder.
func unchangedByDryRuns(t *testing.T, cache, out string) {
	t.Helper()
	before := listing(t, cache)
	t.Cleanup(func() {
		after := listing(t, cache)
		var wrote []string
		for p, st := range after {
			if was, ok := before[p]; !ok || was != st {
				wrote = append(wrote, p)
			}
		}
		for p := range before {
			if _, ok := after[p]; !ok {
				wrote = append(wrote, p+" (removed)")
			}
		}
		slices.Sort(wrote)
		if len(wrote) > 0 {
			t.Errorf("dry runs wrote into the cache: %s", strings.Join(wrote[:min(len(wrote), 5)], ", "))
		}
		if _, err := os.Lstat(out); err == nil {
			t.Errorf("dry runs created the output folder %s", out)
		}
	})
}

// listing is every file and folder under dir with its size and
// modification time.
func listing(t *testing.T, dir string) map[string]string {
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		if info, err := d.Info(); err == nil {
			m[p] = fmt.Sprint(info.Size(), info.ModTime().UnixNano(), info.Mode())
		}
		return nil
	})
	return m
}

// TestPaperRecordsReproduce: cells of the committed paper runs
// (records/paper), one of every kind of record that decides a
// conclusion, re-run here into a fresh folder and cache give records
// equal to the committed ones — the same key, and the same statistics,
// notes and scores: everything but the provenance (when, where, how
// fast: numbersOf). Exact mapping statistics (CusText Table 6 survival, 4 cells),
// sampled draws (the first seed of the LREC-COLING deniability table),
// a Bayes adversary (Xu Fig. 2, Laplace at ε = 25, one seed), a query
// attack with its simulated votes (CusText Table 8, K = 50 at ε = 3), a
// searching stage (Feyisetan Table 1's ε search, one seed: its stage
// records too) and a trained model (the Twitter baseline of Xu's
// utility run, one seed), each narrowed by overrides that leave its
// cells' keys as they are. A trained model is bit for bit the same when
// trained twice here; against the committed record, which another CPU
// may have written (libtorch picks other kernels for AVX-512 and AVX2;
// docs/config.md), its accuracy may differ by at most 2 test examples,
// and any difference is logged. Fails when a change of xp moves a
// committed number without the records being run again. The kinds run in
// parallel, each in its own folder and cache.
func TestPaperRecordsReproduce(t *testing.T) {
	root := realdata.Root(t)
	f, err := claims.Read("../configs/published.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, run string
		sets      []string
		trained   bool
	}{
		{"mapping", "custext-table6-survival", nil, false},
		{"sampled draws", "lrec2024-deniability", []string{"seeds=[1]"}, false},
		{"Bayes adversary", "xu-fig2-product-reviews", []string{"seeds=[1]", "mechanisms=[{name: laplace, epsilon: [25]}]"}, false},
		{"query attack", "custext-table8", []string{"mechanisms=[{name: custext, epsilon: [3], params: {k: 50}}]"}, false},
		{"searching stage", "feyisetan-table1", []string{"seeds=[1]"}, false},
		{"trained model", "xu-fig2-twitter-utility", []string{"seeds=[1]", "mechanisms=[]", "apply=[none]"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, ok := f.Run(c.run)
			if !ok {
				t.Fatalf("no run %s", c.run)
			}
			committed, err := results.ReadStore(f.Dir(r.Name))
			if err != nil {
				t.Fatal(err)
			}
			rerun := func() (Summary, *results.Store) {
				dir := t.TempDir()
				sets := append(append(slices.Clone(r.Set), c.sets...), "output="+filepath.Join(dir, "out"), "cache="+realCache(t, root))
				cfg, err := experiments.Load(f.ConfigPath(r), experiments.Options{Set: sets, DataRoot: root})
				if err != nil {
					t.Fatal(err)
				}
				sum, err := Run(context.Background(), cfg, Options{})
				if err != nil || sum.Failed > 0 {
					t.Fatalf("%v (%d failed)", err, sum.Failed)
				}
				fresh, err := results.ReadStore(cfg.Output)
				if err != nil {
					t.Fatal(err)
				}
				return sum, fresh
			}
			sum, fresh := rerun()
			cells := slices.Concat(sum.Cells, sum.Stages)
			if len(cells) == 0 {
				t.Fatal("the overrides left no cell")
			}
			var again *results.Store
			if c.trained {
				_, again = rerun()
			}
			for _, cs := range cells {
				want, ok, err := committed.Get(cs.Key)
				if err != nil || !ok {
					t.Errorf("%s: no committed record %s (%v): the run's keys moved", cs.Cell, cs.Key, err)
					continue
				}
				got, _, _ := fresh.Get(cs.Key)
				got, want = numbersOf(got), numbersOf(want)
				a, _ := json.Marshal(got)
				b, _ := json.Marshal(want)
				if !c.trained {
					if !bytes.Equal(a, b) {
						t.Errorf("%s: the re-run record differs from the committed one:\n got %s\nwant %s", cs.Cell, a, b)
					}
					continue
				}
				second, _, _ := again.Get(cs.Key)
				if a2, _ := json.Marshal(numbersOf(second)); !bytes.Equal(a, a2) {
					t.Errorf("%s: trained twice here, two records:\n%s\n%s", cs.Cell, a, a2)
				}
				if got.Model == "" {
					t.Errorf("%s: no trained model in the record", cs.Cell)
				}
				n := max(want.Test.N, 1)
				if d := math.Abs(got.Test.Accuracy - want.Test.Accuracy); d*float64(n) > 2+1e-9 {
					t.Errorf("%s: accuracy %v here, %v committed: %.0f test examples apart", cs.Cell, got.Test.Accuracy, want.Test.Accuracy, d*float64(n))
				} else if !bytes.Equal(a, b) {
					t.Logf("%s: the record differs from the committed one within the tolerance (accuracy %v here, %v committed)", cs.Cell, got.Test.Accuracy, want.Test.Accuracy)
				}
			}
		})
	}
}

// numbersOf is a record without what says when, where and how fast it
// was made: its provenance, and each epoch's examples per second.
func numbersOf(r results.Record) results.Record {
	r.Provenance = results.Provenance{}
	r.Epochs = slices.Clone(r.Epochs)
	for i := range r.Epochs {
		r.Epochs[i].ExamplesPerSec = 0
	}
	return r
}
