package claims

import (
	"fmt"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/internal/vcs"
	"github.com/xp-nlp/xp/results"
)

// lineage answers from a table: commits in it are in range or not, any
// other is missing from the history.
type lineage map[string]bool

func (l lineage) Between(since, commit string) (bool, error) {
	in, ok := l[commit]
	if !ok {
		return false, fmt.Errorf("commit %s: %w", commit, vcs.ErrNoHistory)
	}
	return in, nil
}

func TestCheckCode(t *testing.T) {
	rec := func(key, commit string, dirty bool) results.Record {
		return results.Record{Key: key, Provenance: results.Provenance{Git: commit, GitDirty: dirty}}
	}
	l := lineage{"aaa": true, "bbb": false}
	for _, c := range []struct {
		name      string
		recs      []results.Record
		want      string // "" accepted
		unchecked int
	}{
		{"in range", []results.Record{rec("k1", "aaa", false), rec("k2", "aaa", false)}, "", 0},
		{"no commit", []results.Record{rec("k1", "aaa", false), rec("k2", "", false)}, "k2.json: no commit stamped", 0},
		{"uncommitted changes", []results.Record{rec("k1", "aaa", true)}, "k1.json: written by commit aaa with uncommitted changes", 0},
		{"outside the range", []results.Record{rec("k1", "aaa", false), rec("k2", "bbb", false)}, "k2.json: written by commit bbb, outside", 0},
		{"not in this history", []results.Record{rec("k1", "ccc", false), rec("k2", "ccc", false)}, "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &File{Code: Code{Since: strings.Repeat("a", 40)}, Lineage: l}
			err := f.checkCode("r", "dir", c.recs)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
			if len(f.Unchecked()) != c.unchecked {
				t.Errorf("unchecked %q, want %d line(s)", f.Unchecked(), c.unchecked)
			}
		})
	}
	f := &File{Lineage: lineage{}}
	if err := f.checkCode("r", "dir", []results.Record{rec("k", "", true)}); err != nil {
		t.Errorf("a file that declares no code checks none: %v", err)
	}
}

// TestKeptRecordsFromDeclaredCode: every record kept under records/paper
// was written by a clean commit on this checkout's history from
// configs/published.yaml's code.since to HEAD.
func TestKeptRecordsFromDeclaredCode(t *testing.T) {
	f, err := Read("../configs/published.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f.Code.Since == "" {
		t.Fatal("configs/published.yaml declares no code.since")
	}
	if _, err := f.Decide(); err != nil {
		t.Fatal(err)
	}
	for _, u := range f.Unchecked() {
		t.Logf("not checked here: %s", u)
	}
}
