package datasets

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestSpecsDocumented: docs/data.md's table of corpora has one row per
// corpus xp loads, by its config name in the first cell, and no row for
// a name that is none (docs/extending.md, a dataset).
func TestSpecsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/data.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n| name | looked for under the root |")
	if !ok {
		t.Fatal("docs/data.md has no table of corpora (| name | looked for under the root | …)")
	}
	var rows []string
	for _, l := range strings.Split(table, "\n")[1:] {
		if strings.HasPrefix(l, "|-") {
			continue // the header's rule
		}
		if !strings.HasPrefix(l, "| ") {
			break
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(l, "| "), " |")
		rows = append(rows, first)
	}
	var names []string
	for _, s := range Specs() {
		names = append(names, s.Name)
		if !slices.Contains(rows, s.Name) {
			t.Errorf("docs/data.md: corpus %s has no row in the table of corpora", s.Name)
		}
	}
	for _, r := range rows {
		if !slices.Contains(names, r) {
			t.Errorf("docs/data.md: a row for %s, which is no corpus (known: %s)", r, strings.Join(names, ", "))
		}
	}
}
