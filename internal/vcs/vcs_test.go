package vcs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a checkout whose main line is a, b, c (HEAD) with a branch
// d off a, and returns it with the four commits' hashes.
func repo(t *testing.T) (Repo, map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed to test vcs: %v", err)
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(name string) string {
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		run("add", "f")
		run("commit", "-q", "-m", name)
		return run("rev-parse", "HEAD")
	}
	run("init", "-q", "-b", "main")
	c := map[string]string{}
	c["a"] = commit("a")
	run("checkout", "-q", "-b", "side")
	c["d"] = commit("d")
	run("checkout", "-q", "main")
	c["b"] = commit("b")
	c["c"] = commit("c")
	return Repo{Dir: dir}, c
}

func TestBetween(t *testing.T) {
	r, c := repo(t)
	for _, tc := range []struct {
		since, commit string
		want          bool
	}{
		{"b", "c", true},
		{"b", "b", true}, // both ends included
		{"a", "c", true},
		{"c", "c", true},  // HEAD itself
		{"c", "b", false}, // older than since
		{"b", "a", false},
		{"a", "d", false}, // another branch's, not HEAD's history
	} {
		got, err := r.Between(c[tc.since], c[tc.commit])
		if err != nil || got != tc.want {
			t.Errorf("Between(%s, %s) = %v, %v; want %v", tc.since, tc.commit, got, err, tc.want)
		}
	}
	if _, err := r.Between(c["a"], strings.Repeat("0", 40)); !errors.Is(err, ErrNoHistory) {
		t.Errorf("a commit the history lacks: %v, want ErrNoHistory", err)
	}
	if _, err := r.Between(c["a"], "HEAD; rm -rf /"); err == nil || errors.Is(err, ErrNoHistory) {
		t.Errorf("a name that is no hash: %v, want a refusal of the name", err)
	}
	if _, err := (Repo{Dir: t.TempDir()}).Between(c["a"], c["b"]); !errors.Is(err, ErrNoHistory) {
		t.Errorf("a folder that is no checkout: %v, want ErrNoHistory", err)
	}
}

func TestStampOfThisCheckout(t *testing.T) {
	commit, _ := Stamp()
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil && commit != strings.TrimSpace(string(out)) {
		t.Errorf("Stamp = %q, the checkout's HEAD is %s", commit, out)
	}
}
