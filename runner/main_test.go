package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/xp-nlp/xp/internal/testcache"
)

// TestMain removes the vectors the package's tests share (testcache).
func TestMain(m *testing.M) {
	code := m.Run()
	testcache.Remove()
	os.Exit(code)
}

// realCache is a new cache folder for a run over the data root's vectors
// holding their binary caches, each parsed once per test binary; without a
// data root, an empty folder.
func realCache(t *testing.T, root string) string {
	t.Helper()
	if root == "" {
		return t.TempDir()
	}
	paths, err := filepath.Glob(filepath.Join(root, "embeddings", "*.vec.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return testcache.Vectors(t, paths...)
}
