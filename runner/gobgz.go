package runner

import (
	"bytes"
	"compress/gzip"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/xp-nlp/xp/internal/xio"
)

// readGobGz decodes v from a gob-in-gzip cache file, read to its trailer
// so that its CRC-32 catches damaged bytes and truncation, and through
// xio.ReadGzipMax, so that what is there instead (a link to a device, a
// FIFO, a file that inflates without end) is refused, not read. A file
// that does not decode is reported as damaged; a missing file returns
// the open error (fs.ErrNotExist).
func readGobGz(path string, v any) error {
	raw, err := xio.ReadGzipMax(path, xio.MaxCache)
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err != nil {
		return fmt.Errorf("damaged: %w", err)
	}
	if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(v); err != nil {
		return fmt.Errorf("damaged: %w", err)
	}
	return nil
}

// writeGobGz writes v as a gob-in-gzip cache file atomically: concurrent
// writers of one entry (shards sharing a cache) waste work at worst.
func writeGobGz(path string, v any) error {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := gob.NewEncoder(zw).Encode(v); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	return xio.WriteFileAtomic(path, buf.Bytes())
}
