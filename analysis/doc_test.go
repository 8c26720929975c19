package analysis

import (
	"slices"
	"testing"

	"github.com/xp-nlp/xp/internal/doctest"
	"github.com/xp-nlp/xp/spec"
)

// TestPackageDoc: every analysis spec describes has one kind here, with
// its run and its plan, nothing else is registered, and the package doc
// names each (it named 5 of 8).
func TestPackageDoc(t *testing.T) {
	named, err := doctest.Bracketed("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	names := spec.Names(spec.Analysis)
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k.name] || k.run == nil || k.plan == nil {
			t.Errorf("%s: registered twice, or without its run or plan", k.name)
		}
		seen[k.name] = true
		if !slices.Contains(names, k.name) {
			t.Errorf("%s is computed here but spec does not describe it", k.name)
		}
	}
	for _, n := range names {
		if !seen[n] {
			t.Errorf("spec describes %s; package analysis does not compute it", n)
		}
		if !named[n] {
			t.Errorf("analysis/doc.go does not name %s (in brackets)", n)
		}
	}
}
