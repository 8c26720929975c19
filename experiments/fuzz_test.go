package experiments

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParse: a config's bytes, whatever they are, give a config or an
// error that names the file — never a panic. The seed corpus is every
// config the repository ships, and a few broken ones; make fuzz runs it
// longer (go test -fuzz=FuzzParse ./experiments).
func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob("../configs/*.yaml")
	more, _ := filepath.Glob("../configs/paper/*.yaml")
	for _, p := range append(paths, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "name: x", "- a\n- b", "name: [", "mechanisms:\n  - name: laplace\n    epsilon: [1e400]", "seeds: [-1]",
		"train:\n  epochs: 99999999999999999999", "train:\n  epochs: [1, &e 2]\n  batch: [*e, [3]]", "name: \"\\u0000\"", "a: &a [*a]", "<<: {name: x}", "name: x\nname: y"} {
		f.Add([]byte(s))
	}
	f.Add(aliasBomb) // hung xp at 100% CPU for 26 minutes
	f.Fuzz(func(t *testing.T, data []byte) {
		// Go's fuzzing stops no input that hangs: one that takes 10 s fails.
		timer := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("slow input %q", data)) })
		defer timer.Stop()
		c, err := Parse("fuzz.yaml", data, Options{})
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Errorf("error without the file's name: %v", err)
			}
			return
		}
		if c == nil {
			t.Fatal("no config and no error")
		}
		c.Cells() // a valid config plans without a panic
	})
}
