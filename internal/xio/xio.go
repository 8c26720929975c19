// Package xio owns how xp opens an input file whatever its packaging:
// plain, gzip (.gz) or a member of a zip archive (.zip), and how it reads
// such a file line by line with the line number at hand for error messages.
package xio

import (
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/xp-nlp/xp/internal/srcerr"
)

// Open opens path for reading, decompressing .gz files and opening the
// only regular member of a .zip archive (or, for "archive.zip#member.txt",
// the named member). Name is the path to show in messages.
func Open(path string) (rc io.ReadCloser, name string, err error) {
	file, member, _ := strings.Cut(path, "#")
	switch {
	case strings.HasSuffix(file, ".zip"):
		return openZip(file, member)
	case strings.HasSuffix(file, ".gz"):
		f, err := os.Open(file)
		if err != nil {
			return nil, file, err
		}
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			f.Close()
			return nil, file, srcerr.At(file, 0, "not a gzip file: %w", err)
		}
		return &stacked{Reader: zr, closers: []io.Closer{zr, f}}, file, nil
	default:
		f, err := os.Open(file)
		if err != nil {
			return nil, file, err
		}
		return f, file, nil
	}
}

func openZip(file, member string) (io.ReadCloser, string, error) {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return nil, file, srcerr.At(file, 0, "not a zip archive: %w", err)
	}
	var pick *zip.File
	var names []string
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.HasPrefix(f.Name, "__MACOSX/") {
			continue
		}
		names = append(names, f.Name)
		if member == "" || f.Name == member {
			pick = f
		}
	}
	switch {
	case member != "" && pick == nil:
		zr.Close()
		return nil, file, srcerr.At(file, 0, "no member %q in archive", member)
	case member == "" && len(names) != 1:
		zr.Close()
		return nil, file, srcerr.At(file, 0, "archive has %d files %v; name one as %s#MEMBER", len(names), names, file)
	}
	r, err := pick.Open()
	if err != nil {
		zr.Close()
		return nil, file, srcerr.At(file, 0, "open member %s: %w", pick.Name, err)
	}
	name := file + "#" + pick.Name
	return &stacked{Reader: r, closers: []io.Closer{r, zr}}, name, nil
}

type stacked struct {
	io.Reader
	closers []io.Closer
}

func (s *stacked) Close() error {
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Lines reads r line by line. Line endings (LF or CRLF) are removed. Err
// places a read failure (a truncated gzip stream, for instance) at the line
// where it happened.
type Lines struct {
	sc   *bufio.Scanner
	name string
	n    int
	err  error
}

// MaxLine is the longest line Lines accepts (GloVe 840B rows are ~3 KB;
// a review can be tens of KB).
const MaxLine = 64 << 20

// NewLines returns a line reader over r; name is used in errors.
func NewLines(r io.Reader, name string) *Lines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), MaxLine)
	return &Lines{sc: sc, name: name}
}

// Next advances to the next line and reports whether there is one.
func (l *Lines) Next() bool {
	if !l.sc.Scan() {
		if err := l.sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				err = fmt.Errorf("line longer than %d bytes", MaxLine)
			}
			l.err = srcerr.Wrap(l.name, l.n+1, err)
		}
		return false
	}
	l.n++
	return true
}

// Bytes returns the current line without its line ending. It is valid
// until the next call of Next.
func (l *Lines) Bytes() []byte {
	b := l.sc.Bytes()
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// Text returns the current line as a string.
func (l *Lines) Text() string { return string(l.Bytes()) }

// N is the 1-based number of the current line.
func (l *Lines) N() int { return l.n }

// Name is the file name used in errors.
func (l *Lines) Name() string { return l.name }

// Err returns the read error that stopped Next, positioned at its line.
func (l *Lines) Err() error { return l.err }

// Errorf returns an error positioned at the current line.
func (l *Lines) Errorf(format string, args ...any) error {
	return srcerr.At(l.name, l.n, format, args...)
}

// Gunzip returns a gzip reader over r; name is used in errors.
func Gunzip(r io.Reader, name string) (*gzip.Reader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, srcerr.At(name, 0, "not a gzip file: %w", err)
	}
	return zr, nil
}

// SHA256File returns the hex sha256 of a file's bytes as stored.
func SHA256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// WriteFileAtomic writes data to path through a temporary file in the same
// folder, synced and renamed, so a reader (or a run killed midway) never
// sees a partial file.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
