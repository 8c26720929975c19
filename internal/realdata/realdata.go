// Package realdata gives tests and benchmarks the real data root — the
// public datasets and embeddings that XP_DATA points at (`make` points it
// at ../shared/data beside the clone) — or skips them, saying why and
// how to run them: the one place that rule lives.
package realdata

import (
	"os"
	"path/filepath"
	"testing"
)

// Env is the variable naming the data root (datasets.EnvRoot).
const Env = "XP_DATA"

// Root returns the data root, or skips tb when it is unset or missing.
func Root(tb testing.TB) string {
	tb.Helper()
	root := os.Getenv(Env)
	if root == "" {
		tb.Skip("SKIP: " + Env + " is not set; real-data test not run (make test sets it to ../shared/data when present)")
	}
	if _, err := os.Stat(root); err != nil {
		tb.Skipf("SKIP: data root %s: %v; real-data test not run", root, err)
	}
	return root
}

// File returns the file rel under the data root, or skips tb when the
// root or the file is missing.
func File(tb testing.TB, rel string) string {
	tb.Helper()
	p := filepath.Join(Root(tb), rel)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("SKIP: %v; real-data test not run", err)
	}
	return p
}
