package claims

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/xp-nlp/xp/internal/vcs"
	"github.com/xp-nlp/xp/results"
)

// Code declares which code the kept records may come from: Since is the
// oldest commit whose code computes every kept record's numbers as the
// checkout's HEAD does. A record is bound to the code when the commit it
// was written by is a clean commit on the history from Since to HEAD.
// Whoever changes what a kept record holds moves Since past the change
// and re-runs what it invalidated (`make paper` runs what is missing);
// TestPaperRecordsReproduce re-runs a cell of every kind at HEAD and
// compares.
type Code struct {
	Since string `yaml:"since"`
}

// Lineage answers whether a commit lies on the history from since to
// HEAD (vcs.Repo.Between); an error wrapping vcs.ErrNoHistory says the
// history here cannot tell.
type Lineage interface {
	Between(since, commit string) (bool, error)
}

// lineage is the file's Lineage: its own where set, else the git checkout
// holding the file.
func (f *File) lineage() Lineage {
	if f.Lineage != nil {
		return f.Lineage
	}
	return vcs.Repo{Dir: filepath.Dir(f.Path)}
}

// checkCode reports the first of a run's records not bound to the code
// the file declares (Code): one with no commit, one written from a tree
// with uncommitted changes, or one whose commit is outside Since..HEAD.
// Records whose commit this checkout's history lacks (a shallow clone,
// a tarball) are not refused: the commit is noted (Unchecked) and the
// check is left to a full clone. Each commit is asked about once.
func (f *File) checkCode(run, dir string, recs []results.Record) error {
	if f.Code.Since == "" {
		return nil
	}
	l := f.lineage()
	for _, r := range recs {
		p := r.Provenance
		path := filepath.Join(dir, "cells", r.Key+".json")
		switch {
		case p.Git == "":
			return fmt.Errorf("run %s: %s: no commit stamped: the code that wrote it is unknown", run, path)
		case p.GitDirty:
			return fmt.Errorf("run %s: %s: written by commit %.12s with uncommitted changes: the code that wrote it is not a commit (re-run it from a clean checkout)", run, path, p.Git)
		}
		if f.between == nil {
			f.between = map[string]error{}
		}
		err, asked := f.between[p.Git]
		if !asked {
			var in bool
			in, err = l.Between(f.Code.Since, p.Git)
			if err == nil && !in {
				err = fmt.Errorf("written by commit %.12s, outside the code the records are declared to come from (code.since %.12s to HEAD): re-run it, or move code.since after checking that the code computes the same",
					p.Git, f.Code.Since)
			}
			f.between[p.Git] = err
			if errors.Is(err, vcs.ErrNoHistory) {
				f.unchecked = append(f.unchecked, fmt.Sprintf("run %s: commit %.12s not checked against code.since: %v", run, p.Git, err))
			}
		}
		if err != nil && !errors.Is(err, vcs.ErrNoHistory) {
			return fmt.Errorf("run %s: %s: %w", run, path, err)
		}
	}
	return nil
}

// Unchecked lists the records' commits Decide could not place on the
// history from code.since to HEAD because this checkout lacks them; a
// full clone checks them.
func (f *File) Unchecked() []string { return f.unchecked }
