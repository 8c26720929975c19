package results_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/table"
)

// FuzzRecord: a record file, whatever its bytes (a damaged disk, a
// hand edit, another tool's JSON), is read as a record of its key or
// reported as a problem — never a panic — and the tables and long.csv
// read whatever is read.
func FuzzRecord(f *testing.F) {
	seeds, _ := filepath.Glob("../records/paper/*/cells/*.json")
	for i, p := range seeds {
		if i%40 != 0 { // a sample of the kinds the repository keeps
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "{}", "null", "[]", `{"key": "k"}`, `{"key": "k", "status": "ok", "analysis": {"stats": [{"name": "x", "value": "NaN"}]}}`,
		`{"key": "k", "status": "ok", "test": {"n": -1, "correct": "10x"}}`, `{"key": "k", "cell": {"epsilon": 1e999}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		key := "k" // the file is named by the key it holds, where that is a plain name
		var named struct{ Key string }
		if json.Unmarshal(data, &named) == nil && plainKey.MatchString(named.Key) {
			key = named.Key
		}
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "cells"), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cells", key+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := results.ReadStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		r, ok, err := s.Get(key)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if len(s.Problems()) == 0 {
				t.Error("an unusable record without a problem reported")
			}
			return
		}
		if r.Key != key {
			t.Fatalf("record of key %q read as %s", r.Key, key)
		}
		recs := []results.Record{r}
		table.Markdown(results.Table(recs, results.TableOptions{}))
		table.AnalysisMarkdown(results.AnalysisTable(recs, nil))
		var b nopWriter
		if err := table.WriteLong(&b, recs, nil); err != nil {
			t.Fatal(err)
		}
	})
}

var plainKey = regexp.MustCompile(`^[0-9a-z]{1,64}$`)

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
