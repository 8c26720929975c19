package analysis

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/xp-nlp/xp/spec"
)

// TestPackageDoc: every analysis spec describes is run and planned here,
// nothing else is, and the package doc names each (it named 5 of 8).
func TestPackageDoc(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\(([a-z-]+)\)`).FindAllStringSubmatch(string(b), -1) {
		named[m[1]] = true
	}
	names := spec.Names(spec.Analysis)
	for _, n := range names {
		if analyses[n] == nil || plans[n] == nil {
			t.Errorf("spec describes %s: run %v, planned %v", n, analyses[n] != nil, plans[n] != nil)
		}
		if !named[n] {
			t.Errorf("analysis/doc.go does not name %s (in brackets)", n)
		}
	}
	for n := range analyses {
		if !slices.Contains(names, n) {
			t.Errorf("%s is run here but spec does not describe it", n)
		}
	}
	if len(plans) != len(analyses) {
		t.Errorf("%d plans for %d analyses", len(plans), len(analyses))
	}
}
