package xio

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenLock: a lock is opened only as a regular file xp may have made:
// a symbolic link there (to a file of the user's) is refused and its
// target left as it was; a FIFO is refused without blocking; a missing
// lock is created.
func TestOpenLock(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "precious.txt")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.lock")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenLock(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		if f != nil {
			f.Close()
		}
		t.Errorf("a symlinked lock: %v, want refused as a symbolic link", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Errorf("the link's target became %q", b)
	}
	fifo := filepath.Join(dir, "fifo.lock")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenLock(fifo); err == nil || !strings.Contains(err.Error(), "named pipe") {
		if f != nil {
			f.Close()
		}
		t.Errorf("a FIFO lock: %v, want refused as a named pipe", err)
	}
	f, err := OpenLock(filepath.Join(dir, "new.lock"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestSameFile: two spellings, a symbolic link and a hard link to one file
// are the same file; two files of equal content are not.
func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.csv")
	b := filepath.Join(dir, "b.csv")
	os.WriteFile(a, []byte("x"), 0o644)
	os.WriteFile(b, []byte("x"), 0o644)
	os.Symlink(a, filepath.Join(dir, "link.csv"))
	os.Link(a, filepath.Join(dir, "hard.csv"))
	for _, c := range []struct {
		x, y string
		same bool
	}{
		{a, filepath.Join(dir, ".", "a.csv"), true},
		{a, filepath.Join(dir, "link.csv"), true},
		{a, filepath.Join(dir, "hard.csv"), true},
		{a, b, false},
		{a, filepath.Join(dir, "missing.csv"), false},
	} {
		if got := SameFile(c.x, c.y); got != c.same {
			t.Errorf("SameFile(%s, %s) = %v", c.x, c.y, got)
		}
	}
}

// TestOpenWrite: a file written in place (a download's .part) is never a
// symbolic link followed (its target is left as it was) nor a FIFO.
func TestOpenWrite(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "precious.txt")
	os.WriteFile(victim, []byte("keep me\n"), 0o644)
	link := filepath.Join(dir, "x.part")
	os.Symlink(victim, link)
	if f, err := OpenWrite(link, os.O_TRUNC); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		if f != nil {
			f.Close()
		}
		t.Errorf("a symlinked .part: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Errorf("the link's target became %q", b)
	}
	fifo := filepath.Join(dir, "y.part")
	syscall.Mkfifo(fifo, 0o644)
	if f, err := OpenWrite(fifo, os.O_APPEND); err == nil {
		f.Close()
		t.Error("a FIFO .part opened for writing")
	}
	f, err := OpenWrite(filepath.Join(dir, "z.part"), os.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
