package vcs

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
)

// Stamp is the commit xp was built from (stamped by go build) or, for
// test binaries, that of the working directory's checkout, and whether
// that tree had uncommitted changes to tracked files. It is "" where
// neither is known.
func Stamp() (commit string, dirty bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			return rev, dirty
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	st, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), len(bytes.TrimSpace(st)) > 0
}

// ErrNoHistory marks a question the repository cannot answer: git is
// missing, the folder is no checkout, or a commit asked about is not in
// its history (a shallow clone, a tarball).
var ErrNoHistory = errors.New("not in this checkout's history")

// Repo is a git checkout: Dir is any folder inside it.
type Repo struct {
	Dir string
}

var hexCommit = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// Between reports whether commit lies on the history from since to the
// checkout's HEAD, both ends included: since is commit or one of its
// ancestors, and commit is HEAD or one of HEAD's. A commit of another
// branch, one older than since, or a name that is no commit's hash is
// outside. An error wrapping ErrNoHistory says the question could not be
// asked here.
func (r Repo) Between(since, commit string) (bool, error) {
	for _, c := range []string{since, commit} {
		if !hexCommit.MatchString(c) {
			return false, fmt.Errorf("%q is not a commit hash", c)
		}
		if err := r.git("cat-file", "-e", c+"^{commit}"); err != nil {
			return false, fmt.Errorf("commit %.12s: %w", c, ErrNoHistory)
		}
	}
	for _, pair := range [][2]string{{since, commit}, {commit, "HEAD"}} {
		err := r.git("merge-base", "--is-ancestor", pair[0], pair[1])
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() == 1:
			// A shallow clone cuts the history: "no" may mean "not here".
			if out, err := exec.Command("git", "-C", r.Dir, "rev-parse", "--is-shallow-repository").Output(); err != nil || strings.TrimSpace(string(out)) != "false" {
				return false, fmt.Errorf("%.12s before %s in a shallow clone: %w", pair[0], pair[1], ErrNoHistory)
			}
			return false, nil
		case err != nil:
			return false, fmt.Errorf("git merge-base %.12s %s: %v: %w", pair[0], pair[1], err, ErrNoHistory)
		}
	}
	return true, nil
}

// git runs one git command in the checkout, its output discarded.
func (r Repo) git(args ...string) error {
	cmd := exec.Command("git", append([]string{"-C", r.Dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%v: %w", err, ErrNoHistory)
	}
	return nil
}
