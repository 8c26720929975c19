package runner

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestDrawMemo: what one memo keeps another reads back (per number of
// draws); a damaged or foreign file is reported and treated as empty, and
// the next Put replaces it.
func TestDrawMemo(t *testing.T) {
	dir := t.TempDir()
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, f) }
	counts := map[string]map[int32]int{"happy": {3: 7, 9: 3}, "sad": {4: 10}}
	if err := (&drawMemo{dir: dir, key: "k", logf: logf}).Put(10, counts); err != nil {
		t.Fatal(err)
	}
	fresh := &drawMemo{dir: dir, key: "k", logf: logf}
	got, err := fresh.Get(10, []string{"happy", "sad", "glad"})
	if err != nil || !reflect.DeepEqual(got, counts) {
		t.Errorf("read back %v (%v), want %v", got, err, counts)
	}
	if got, _ := fresh.Get(20, []string{"happy"}); len(got) != 0 {
		t.Errorf("20 draws answered from 10: %v", got)
	}
	if got, _ := (&drawMemo{dir: dir, key: "other", logf: logf}).Get(10, []string{"happy"}); len(got) != 0 {
		t.Errorf("another key answered: %v", got)
	}
	// Damage the file: read as empty (reported), rewritten by the next Put.
	path := fresh.path(10)
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:len(b)-4], 0o666)
	damaged := &drawMemo{dir: dir, key: "k", logf: logf}
	if got, _ := damaged.Get(10, []string{"happy"}); len(got) != 0 || len(logged) != 1 || !strings.Contains(logged[0], "drawing again") {
		t.Errorf("damaged file: %v, logged %q", got, logged)
	}
	if err := damaged.Put(10, map[string]map[int32]int{"glad": {1: 10}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := (&drawMemo{dir: dir, key: "k", logf: logf}).Get(10, []string{"happy", "glad"}); len(got) != 1 || got["glad"][1] != 10 {
		t.Errorf("after the rewrite: %v", got)
	}
}
