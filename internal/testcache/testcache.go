// Package testcache gives tests a cache folder that already holds the
// binary cache of the real vector files they read, so that each file is
// parsed once per test binary rather than once per run: parsing the
// 300-d fastText vectors takes about a second on two cores, and the
// runner's and the command's tests read them some sixty times. A run
// reads a cache entry only when its source is unchanged (datasets/embedding
// checks size, mtime or sha256), so a test that is handed one computes
// what it would have computed from the text file.
package testcache

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/xp-nlp/xp/datasets/embedding"
)

// store is the test binary's folder of parsed vectors, made on first use
// and removed by Remove.
var store struct {
	mu     sync.Mutex
	dir    string
	loaded map[string]error // a vector file's path → its first load's error
}

// Vectors returns a new folder for tb (removed with it) laid out as a
// run's cache (its embeddings/ folder, as the runner reads it) holding
// the binary cache of each vector file in paths. Each file is parsed once
// per test binary; every folder Vectors returns gets its own copy of the
// entries (hard links where the file system allows), so that a run
// writing into its cache changes no other test's.
func Vectors(tb testing.TB, paths ...string) string {
	tb.Helper()
	src, err := load(paths)
	if err != nil {
		tb.Fatal(err)
	}
	dst := tb.TempDir()
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		return linkOrCopy(p, filepath.Join(dst, rel))
	})
	if err != nil {
		tb.Fatalf("testcache: %v", err)
	}
	return dst
}

// load parses each of paths into the store's cache once.
func load(paths []string) (string, error) {
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.dir == "" {
		dir, err := os.MkdirTemp("", "xp-testcache-")
		if err != nil {
			return "", fmt.Errorf("testcache: %w", err)
		}
		store.dir, store.loaded = dir, map[string]error{}
	}
	for _, p := range paths {
		err, done := store.loaded[p]
		if !done {
			_, err = embedding.Load(context.Background(), p, embedding.Options{CacheDir: filepath.Join(store.dir, "embeddings")})
			store.loaded[p] = err
		}
		if err != nil {
			return "", fmt.Errorf("testcache: %w", err)
		}
	}
	return store.dir, nil
}

// Remove deletes the test binary's store; TestMain calls it after the
// tests have run.
func Remove() {
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.dir != "" {
		os.RemoveAll(store.dir)
		store.dir, store.loaded = "", nil
	}
}

// linkOrCopy makes dst a hard link to src, or a copy where links cannot
// be made (another file system). A run replaces a cache entry by renaming
// a new file over it, never by writing into it, so a link is as good as a
// copy.
func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
