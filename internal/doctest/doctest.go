// Package doctest reads what a package's doc.go names, for the tests that
// keep a package doc in step with the package's registry.
package doctest

import (
	"os"
	"regexp"
	"strings"
)

var bracketed = regexp.MustCompile(`\(([^()]*)\)`)

// Bracketed is the set of names the Go file at path gives in brackets,
// alone or as a comma-separated list ("(laplace)", "(santext, santext+)"),
// its comment markers and line breaks ignored.
func Bracketed(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc := strings.Join(strings.Fields(strings.ReplaceAll(string(b), "//", " ")), " ")
	named := map[string]bool{}
	for _, m := range bracketed.FindAllStringSubmatch(doc, -1) {
		for _, n := range strings.Split(m[1], ", ") {
			named[n] = true
		}
	}
	return named, nil
}
