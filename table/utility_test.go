package table

import (
	"regexp"
	"slices"
	"testing"
)

// TestColumnsDefined: every renderer's list names a defined column, once;
// every column is shown by some renderer and has what the renderers that
// list it read; results.csv's headers are distinct and snake_case.
func TestColumnsDefined(t *testing.T) {
	names := map[string]bool{}
	for _, c := range columns {
		if names[c.name] {
			t.Errorf("column %q defined twice", c.name)
		}
		names[c.name] = true
	}
	listed := map[string]bool{}
	for _, l := range []struct {
		renderer string
		names    []string
		has      func(column) bool
	}{
		{"results.csv", csvColumns, func(c column) bool { return len(c.csv) > 0 }},
		{"results.md", gridColumns, func(c column) bool { return c.title != "" && c.cell != nil }},
		{"results.tex", texColumns, func(c column) bool { return c.tex != "" && c.texCell != nil }},
	} {
		seen := map[string]bool{}
		for _, n := range l.names {
			if !names[n] {
				t.Errorf("%s lists %q, which no column defines", l.renderer, n)
				continue
			}
			if seen[n] {
				t.Errorf("%s lists %q twice", l.renderer, n)
			}
			seen[n], listed[n] = true, true
			if !l.has(col(n)) {
				t.Errorf("%s lists %q, which does not say how it prints there", l.renderer, n)
			}
		}
	}
	for n := range names {
		if !listed[n] {
			t.Errorf("column %q is shown by no renderer", n)
		}
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	var heads []string
	for _, n := range csvColumns {
		for _, f := range col(n).csv {
			if !snake.MatchString(f.name) || slices.Contains(heads, f.name) {
				t.Errorf("results.csv header %q: not snake_case, or twice", f.name)
			}
			heads = append(heads, f.name)
		}
	}
	for _, h := range LongHeader {
		if !snake.MatchString(h) {
			t.Errorf("long.csv header %q is not snake_case", h)
		}
	}
	for _, f := range cellFields {
		if !snake.MatchString(f.name) {
			t.Errorf("cells.csv header %q is not snake_case", f.name)
		}
	}
}
