package mech

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/xp-nlp/xp/internal/xio"
)

// Precomputed structures (Mahalanobis' Σ_p^{1/2}, CusText's mappings) are
// cached in Space.CacheDir, one gob file per structure, named by the
// sha256 of everything they depend on: the embedding's source checksum and
// restriction, the candidate count and dimension, and the structure's own
// inputs. A cache that cannot be read is recomputed and rewritten.

// cacheKey hashes the space's identity and the given parts.
func (s *Space) cacheKey(kind string, parts ...any) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00%d", kind, s.Emb.SourceSHA256, s.Emb.Restriction, s.Emb.Len(), s.Emb.Dim)
	for _, p := range parts {
		fmt.Fprintf(h, "\x00%v", p)
	}
	return kind + "-" + hex.EncodeToString(h.Sum(nil))[:24] + ".gob"
}

// cached loads the value stored under key into v, or computes it with
// build and stores it. Without a cache folder it only builds.
func (s *Space) cached(key string, v any, build func() error) error {
	if s.CacheDir == "" || s.Emb.SourceSHA256 == "" {
		return build()
	}
	path := filepath.Join(s.CacheDir, key)
	b, err := xio.ReadFileMax(path, xio.MaxCache)
	if err == nil && gob.NewDecoder(bytes.NewReader(b)).Decode(v) == nil {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := build(); err != nil {
		return err
	}
	if s.KeepCache {
		return nil
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return err
	}
	if err := os.MkdirAll(s.CacheDir, 0o777); err != nil {
		return err
	}
	return xio.WriteFileAtomic(path, buf.Bytes())
}
