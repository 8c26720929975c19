package results

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRecordNotRegular: a record file that is a link to /dev/zero (read,
// it never ends) or a FIFO (opened, it blocks) is refused in one line
// naming the file and what it is; it neither hangs nor crashes the
// reader.
func TestRecordNotRegular(t *testing.T) {
	out := t.TempDir()
	cells := filepath.Join(out, "cells")
	if err := os.MkdirAll(cells, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(cells, "fifo.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	keys := []string{"fifo"}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if err := os.Symlink("/dev/zero", filepath.Join(cells, "zero.json")); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, "zero")
	}
	s, err := ReadStore(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		_, _, err := s.Get(k)
		if err == nil || !strings.Contains(err.Error(), k+".json is a") || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("record %s: %v", k, err)
		}
	}
}
