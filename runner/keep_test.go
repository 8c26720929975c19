package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/rundir"
)

// snapshot is every file under dir with its bytes and modification time,
// but the lock (taken by every run that may write; records/ ignores it).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == LockName {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[p] = info.ModTime().String() + "\n" + string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// oneCell is an analysis config body of one cheap cell.
const oneCell = `analysis:
  kind: plausible-deniability
  words: 5
  draws: 20
mechanisms:
  - name: laplace
    epsilon: [1]
seeds: [1]
`

// TestKeepComplete: a run whose folder already holds all of it, run again
// with KeepComplete (as xp paper run does), writes nothing at all; without
// it the same run rewrites its manifest, config and plan (`make paper`
// dirtied every committed run folder so). A portable config
// (experiments.Options.Portable) writes no path of the data root it was
// given into the folder.
func TestKeepComplete(t *testing.T) {
	path, out := analysisConfig(t, oneCell)
	// The data root comes from the command, as $XP_DATA gives it.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root string
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "data: "); ok {
			root = v
			continue
		}
		lines = append(lines, l)
	}
	if root == "" {
		t.Fatal("the fixture's config names no data root")
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(keep bool) Summary {
		c, err := experiments.Load(path, experiments.Options{DataRoot: root, Portable: true})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Run(context.Background(), c, Options{KeepComplete: keep})
		if err != nil || sum.Failed > 0 {
			t.Fatalf("run: %v, %d failed", err, sum.Failed)
		}
		return sum
	}
	if first := run(true); first.Ran != 1 || first.Complete {
		t.Fatalf("first run: %d ran, complete %v", first.Ran, first.Complete)
	}
	before := snapshot(t, out)
	for p, content := range before {
		if strings.Contains(content, root) {
			t.Errorf("%s names the data root %s", p, root)
		}
	}
	if !strings.Contains(before[filepath.Join(out, rundir.ResolvedName)], "\ndata: \"\"\n") {
		t.Errorf("config.yaml does not write the command's data root as \"\"")
	}
	time.Sleep(20 * time.Millisecond) // a rewrite shows in the modification time
	if again := run(true); !again.Complete || again.Ran != 0 {
		t.Errorf("second run: complete %v, %d ran", again.Complete, again.Ran)
	}
	after := snapshot(t, out)
	if len(after) != len(before) {
		t.Errorf("%d files before, %d after", len(before), len(after))
	}
	for p, content := range before {
		if after[p] != content {
			t.Errorf("%s was rewritten by a run with nothing to do", p)
		}
	}
	// Without KeepComplete the run writes its folder's files again.
	run(false)
	rewritten := 0
	for p, content := range snapshot(t, out) {
		if before[p] != content {
			rewritten++
		}
	}
	if rewritten == 0 {
		t.Error("a run without KeepComplete rewrote nothing: the check above cannot fail")
	}
	// A folder missing its manifest is not complete: the run writes it.
	os.Remove(filepath.Join(out, "manifest.json"))
	if s := run(true); s.Complete {
		t.Error("a folder without its manifest was taken for complete")
	}
	if _, err := os.Stat(filepath.Join(out, "manifest.json")); err != nil {
		t.Errorf("the manifest was not written again: %v", err)
	}
}

// TestPortableSourceOwned: a run folder whose config.yaml names its source
// relative to the working folder (a portable run's, as the committed
// records do) is the same config's folder: every paper run was refused as
// "a run of another config" once its records named no absolute path.
func TestPortableSourceOwned(t *testing.T) {
	path, out := analysisConfig(t, oneCell)
	runConfig(t, path)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil {
		t.Fatal(err)
	}
	resolved := filepath.Join(out, rundir.ResolvedName)
	b, err := os.ReadFile(resolved)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "file: "+path+"\n") {
		t.Fatalf("config.yaml does not name %s", path)
	}
	if err := os.WriteFile(resolved, []byte(strings.Replace(string(b), "file: "+path+"\n", "file: "+rel+"\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	runConfig(t, path)
}

// TestRecordIndependentOfMemo: a record holds the result, not the state
// of the cache it ran beside. The same cell run into two folders that
// share a cache (the second served from the draws the first memoised)
// writes the same record but for its provenance, which alone says what
// each execution did (its work units, its wall time).
func TestRecordIndependentOfMemo(t *testing.T) {
	path, out := analysisConfig(t, oneCell)
	cache := filepath.Join(t.TempDir(), "cache")
	var recs [2]map[string]any
	var work [2]float64
	for i := range recs {
		dir := fmt.Sprintf("%s-%d", out, i)
		sum := runConfig(t, path, "output="+dir, "cache="+cache)
		got := runRecords(t, path, sum, "output="+dir, "cache="+cache)
		if len(got) != 1 {
			t.Fatalf("run %d: %d records, want 1", i, len(got))
		}
		b, err := json.Marshal(got[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &recs[i]); err != nil {
			t.Fatal(err)
		}
		work[i], _ = recs[i]["provenance"].(map[string]any)["work_units"].(float64) // omitted when 0
		delete(recs[i], "provenance")
	}
	if work[0] == 0 || work[1] != 0 {
		t.Errorf("work units %v: want the first run's draws and none for the second (served by the memo)", work)
	}
	a, _ := json.Marshal(recs[0])
	b, _ := json.Marshal(recs[1])
	if !bytes.Equal(a, b) {
		t.Errorf("the record depends on the memo:\n%s\n%s", a, b)
	}
}

// TestSymlinkedLockRefused: a run folder whose lock is a symbolic link to
// a file of the user's is refused, and the file is left as it was (the
// lock was opened following the link and truncated it).
func TestSymlinkedLockRefused(t *testing.T) {
	path, out := analysisConfig(t, oneCell)
	victim := filepath.Join(t.TempDir(), "precious.txt")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(out, LockName)); err != nil {
		t.Fatal(err)
	}
	c, err := experiments.Load(path, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), c, Options{}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("run with a symlinked lock: %v, want refused", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Errorf("the lock's target became %q", b)
	}
}
