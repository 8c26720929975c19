package rundir

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// records is where the repository keeps the paper runs' records.
const records = "../records/paper"

// TestCommittedRecordsBound: every run folder the repository keeps is
// bound to its plan (State.Bound).
func TestCommittedRecordsBound(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(records, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no run folders under %s: %v", records, err)
	}
	for _, d := range dirs {
		st, err := ReadState(d)
		if err != nil {
			t.Errorf("%s: %v", d, err)
			continue
		}
		if err := st.Bound(); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// TestSplicedRunRefused: a run folder spliced by hand — another run's
// record among its cells, its plan's cell list replaced by another run's,
// a record whose cell was edited, a record that is not in the plan — is
// refused, naming the file of the first mismatch.
func TestSplicedRunRefused(t *testing.T) {
	a, b := "custext-table8", "custext-table8-glove-excerpt" // the same cells over other vectors
	for _, c := range []struct {
		name   string
		splice func(t *testing.T, dir, other string)
		file   string // the file the error names, relative to dir (a folder: any file in it)
		why    string
	}{
		{"another run's record under this run's key", func(t *testing.T, dir, other string) {
			k := firstKey(t, dir)
			rec := readJSON(t, filepath.Join(other, "cells", firstKey(t, other)+".json"))
			rec["key"] = k
			writeJSON(t, filepath.Join(dir, "cells", k+".json"), rec)
		}, "cells/FIRST.json", "hash to key"},
		{"another run's record beside this run's", func(t *testing.T, dir, other string) {
			k := firstKey(t, other)
			copyFile(t, filepath.Join(other, "cells", k+".json"), filepath.Join(dir, "cells", k+".json"))
		}, "cells/OTHER.json", "no cell or stage of the plan"},
		{"another run's cell list in the plan", func(t *testing.T, dir, other string) {
			plan := readJSON(t, filepath.Join(dir, PlanName))
			plan["cells"] = readJSON(t, filepath.Join(other, PlanName))["cells"]
			writeJSON(t, filepath.Join(dir, PlanName), plan)
		}, "cells/", "no cell or stage of the plan"}, // the plan's records are missing, this run's are left over
		{"an edited cell in the plan", func(t *testing.T, dir, other string) {
			plan := readJSON(t, filepath.Join(dir, PlanName))
			cell := plan["cells"].([]any)[0].(map[string]any)["cell"].(map[string]any)
			cell["seed"] = 7.0
			writeJSON(t, filepath.Join(dir, PlanName), plan)
		}, PlanName, "cell 1 is"},
		{"an edited cell in a record", func(t *testing.T, dir, other string) {
			k := firstKey(t, dir)
			p := filepath.Join(dir, "cells", k+".json")
			rec := readJSON(t, p)
			rec["cell"].(map[string]any)["epsilon"] = 2.0
			writeJSON(t, p, rec)
		}, "cells/FIRST.json", "records cell"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, other := copyRun(t, a), copyRun(t, b)
			first, otherFirst := firstKey(t, dir), firstKey(t, other)
			c.splice(t, dir, other)
			st, err := ReadState(dir)
			if err != nil {
				t.Fatal(err)
			}
			err = st.Bound()
			var u *Unbound
			if !errors.As(err, &u) {
				t.Fatalf("a spliced folder: %v, want *Unbound", err)
			}
			want := filepath.Join(dir, strings.NewReplacer("FIRST", first, "OTHER", otherFirst).Replace(c.file))
			if ok := u.Path == want || strings.HasSuffix(c.file, "/") && strings.HasPrefix(u.Path, want); !ok || !strings.Contains(u.Why, c.why) {
				t.Errorf("refused as %q, want %s and %q", err, want, c.why)
			}
		})
	}
}

// copyRun copies a committed run folder (plan, manifest, records) into a
// temporary folder.
func copyRun(t *testing.T, name string) string {
	t.Helper()
	src, dst := filepath.Join(records, name), filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dst, "cells"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{PlanName, "manifest.json"} {
		copyFile(t, filepath.Join(src, f), filepath.Join(dst, f))
	}
	files, _ := filepath.Glob(filepath.Join(src, "cells", "*.json"))
	for _, f := range files {
		copyFile(t, f, filepath.Join(dst, "cells", filepath.Base(f)))
	}
	return dst
}

// firstKey is the key of the first cell of a run's plan.
func firstKey(t *testing.T, dir string) string {
	t.Helper()
	cells := readJSON(t, filepath.Join(dir, PlanName))["cells"].([]any)
	return cells[0].(map[string]any)["key"].(string)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
