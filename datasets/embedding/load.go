package embedding

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/internal/srcerr"
	"github.com/xp-nlp/xp/internal/xio"
)

// Options tune Load.
type Options struct {
	// Format is glove, vec, word2vec-binary or "" to detect: .bin files
	// are binary; a text file whose first line is two integers has a
	// header (vec), otherwise it is GloVe.
	Format string
	// CacheDir holds binary caches; "" disables caching.
	CacheDir string
	// Progress receives a progress bar for the first (streaming) load when
	// it is a terminal; nil draws nothing.
	Progress io.Writer
	// Workers parse text rows in parallel; 0 means one per CPU.
	Workers int
	// Log receives notes (a stale or damaged cache being rebuilt); nil
	// discards them.
	Log io.Writer
}

// Load reads the embedding at path (plain, .gz, .zip or "x.zip#member"),
// from the cache in opt.CacheDir when the source is unchanged since the
// cache was written, and writes the cache after a first load.
func Load(ctx context.Context, path string, opt Options) (*Embedding, error) {
	file, _, _ := strings.Cut(path, "#")
	st, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	if opt.CacheDir != "" {
		e, err := readCache(opt.CacheDir, path, st)
		if err == nil {
			return e, nil
		}
		if !errors.Is(err, errNoCache) {
			// A damaged or stale cache is rebuilt, never trusted.
			if opt.Log != nil {
				fmt.Fprintf(opt.Log, "embedding cache ignored: %v\n", err)
			}
		}
	}
	e, err := parse(ctx, path, st.Size(), opt)
	if err != nil {
		return nil, err
	}
	if opt.CacheDir != "" {
		if err := writeCache(opt.CacheDir, path, st, e); err != nil {
			return nil, fmt.Errorf("embedding cache: %w", err)
		}
	}
	return e, nil
}

func parse(ctx context.Context, path string, size int64, opt Options) (*Embedding, error) {
	format := opt.Format
	file, _, _ := strings.Cut(path, "#")
	if format == "" && strings.HasSuffix(strings.TrimSuffix(strings.TrimSuffix(file, ".gz"), ".zip"), ".bin") {
		format = "word2vec-binary"
	}
	// The sha256 of the stored bytes is computed on the fly, except for
	// zips (their reader seeks), which are hashed in a second pass.
	h := sha256.New()
	bar := progress.New(opt.Progress, size, "embedding "+shortName(file), true)
	defer bar.Finish()
	rc, name, err := openTee(path, io.MultiWriter(h, barWriter{bar}))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var e *Embedding
	switch format {
	case "word2vec-binary":
		e, err = parseBinary(ctx, rc, name)
	case "", "glove", "vec":
		hint := int64(0) // uncompressed size, for preallocation
		if !strings.HasSuffix(file, ".gz") && !strings.HasSuffix(file, ".zip") {
			hint = size
		}
		e, err = parseText(ctx, rc, name, format, opt.Workers, hint)
	default:
		return nil, fmt.Errorf("embedding %s: unknown format %q (glove, vec, word2vec-binary)", name, format)
	}
	if err != nil {
		return nil, err
	}
	// Drain what the parser did not read (gzip trailer, zip remainder) so
	// the hash covers the whole file.
	io.Copy(io.Discard, rc)
	e.Source = path
	e.SourceSHA256 = hex.EncodeToString(h.Sum(nil))
	if strings.HasSuffix(file, ".zip") {
		if e.SourceSHA256, err = xio.SHA256File(file); err != nil {
			return nil, err
		}
	}
	return e, nil
}

type barWriter struct{ b *progress.Bar }

func (w barWriter) Write(p []byte) (int, error) { w.b.Add(int64(len(p))); return len(p), nil }

func shortName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// openTee opens path like xio.Open but copies the raw (compressed) bytes
// read from disk to w. For zips, w sees nothing (see parse).
func openTee(path string, w io.Writer) (io.ReadCloser, string, error) {
	file, _, _ := strings.Cut(path, "#")
	if strings.HasSuffix(file, ".zip") {
		return xio.Open(path)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, file, err
	}
	tee := io.TeeReader(f, w)
	var r io.Reader = tee
	var closers []io.Closer
	if strings.HasSuffix(file, ".gz") {
		zr, err := xio.Gunzip(bufio.NewReaderSize(tee, 1<<20), file)
		if err != nil {
			f.Close()
			return nil, file, err
		}
		r, closers = zr, append(closers, zr)
	}
	return readCloser{r, append(closers, f)}, file, nil
}

type readCloser struct {
	io.Reader
	cs []io.Closer
}

func (r readCloser) Close() error {
	var errs []error
	for _, c := range r.cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// chunk is a block of whole text lines handed to a parsing worker.
type chunk struct {
	seq   int
	line  int // number of its first line
	data  []byte
	words []string
	vecs  []float32
	err   error
}

const chunkSize = 1 << 20

func parseText(ctx context.Context, r io.Reader, name, format string, workers int, size int64) (*Embedding, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	first, err := br.ReadBytes('\n')
	if err != nil && err != io.EOF {
		return nil, srcerr.Wrap(name, 1, err)
	}
	first = bytes.TrimRight(first, "\r\n")
	if len(bytes.TrimSpace(first)) == 0 {
		return nil, srcerr.At(name, 1, "empty file or empty first line")
	}
	e := &Embedding{Format: format}
	want := -1 // vectors announced by a header
	line := 1
	var pending []byte
	if f := strings.Fields(string(first)); len(f) == 2 && isInt(f[0]) && isInt(f[1]) {
		if format == "glove" {
			return nil, srcerr.At(name, 1, "GloVe files have no header, this one starts %q", first)
		}
		want, _ = strconv.Atoi(f[0])
		e.Dim, _ = strconv.Atoi(f[1])
		e.Format = "vec"
		line = 2
	} else {
		if format == "vec" {
			return nil, srcerr.At(name, 1, `want a "<count> <dimension>" header, got %q`, clip(first))
		}
		e.Format = "glove"
		e.Dim = len(splitFields(first)) - 1
		pending = append(first, '\n')
	}
	if e.Dim <= 0 || e.Dim > 1<<16 {
		return nil, srcerr.At(name, 1, "implausible dimension %d", e.Dim)
	}
	capHint := want
	if want < 0 && size > 0 {
		// No header: estimate the rows from the first one so the matrix
		// is allocated once instead of regrown (and copied) ~20 times.
		capHint = int(float64(size)/float64(len(first)+1)*1.05) + 16
	}
	if capHint > 0 {
		e.Words = make([]string, 0, capHint)
		e.Data = make([]float32, 0, capHint*e.Dim)
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *chunk, workers)
	done := make(chan *chunk, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				parseChunk(c, name, e.Dim)
				done <- c
			}
		}()
	}
	var readErr error
	go func() {
		defer func() { close(jobs); wg.Wait(); close(done) }()
		seq := 0
		for {
			buf := make([]byte, len(pending), chunkSize+len(pending)+1024)
			copy(buf, pending)
			n, err := fill(br, buf[len(buf):chunkSize+len(pending)])
			buf = buf[:len(buf)+n]
			pending = nil
			eof := err == io.EOF
			if err != nil && !eof {
				readErr = srcerr.Wrap(name, line+bytes.Count(buf, []byte{'\n'})+1, err)
				return
			}
			if !eof {
				if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
					pending = append([]byte(nil), buf[i+1:]...)
					buf = buf[:i+1]
				} else {
					// A line longer than the chunk: read it whole.
					rest, err := br.ReadBytes('\n')
					buf = append(buf, rest...)
					eof = err == io.EOF
					if err != nil && !eof {
						readErr = srcerr.Wrap(name, line, err)
						return
					}
				}
			}
			if len(buf) > 0 {
				select {
				case jobs <- &chunk{seq: seq, line: line, data: buf}:
				case <-ctx.Done():
					return
				}
				seq++
				line += bytes.Count(buf, []byte{'\n'})
			}
			if eof {
				return
			}
		}
	}()
	// Assemble in order.
	waiting := map[int]*chunk{}
	next := 0
	seen := make(map[string]bool, max(capHint, 1024))
	var firstErr error
	for c := range done {
		if firstErr != nil {
			continue
		}
		waiting[c.seq] = c
		for c := waiting[next]; c != nil; c = waiting[next] {
			delete(waiting, next)
			next++
			if c.err != nil {
				firstErr = c.err
				cancel()
				break
			}
			for i, w := range c.words {
				e.add(seen, w, c.vecs[i*e.Dim:(i+1)*e.Dim])
			}
		}
		if err := ctx.Err(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = readErr
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if len(e.Words) == 0 {
		return nil, srcerr.At(name, 0, "no vectors")
	}
	if rows := len(e.Words) + e.Skipped.Duplicates + e.Skipped.InvalidUTF8; want >= 0 && rows != want {
		return nil, srcerr.At(name, line, "header announces %d vectors, file has %d (truncated download?)", want, rows)
	}
	return e, nil
}

// fill reads into p until it is full or the reader fails; unlike
// io.ReadFull it passes a reader's own io.ErrUnexpectedEOF (a truncated
// gzip stream) through instead of confusing it with a short file.
func fill(r io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func isInt(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0
}

func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

// splitFields splits a row on spaces and tabs (not on other Unicode space:
// GloVe 840B words contain U+00A0).
func splitFields(b []byte) [][]byte {
	return bytes.FieldsFunc(b, func(r rune) bool { return r == ' ' || r == '\t' })
}

// parseChunk parses whole lines: the last dim fields are numbers, the rest
// is the word.
func parseChunk(c *chunk, name string, dim int) {
	data := c.data
	line := c.line - 1
	rows := bytes.Count(data, []byte{'\n'}) + 1
	c.words = make([]string, 0, rows)
	c.vecs = make([]float32, 0, rows*dim)
	vec := make([]float32, dim)
	for len(data) > 0 {
		line++
		var row []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			row, data = data[:i], data[i+1:]
		} else {
			row, data = data, nil
		}
		row = bytes.TrimRight(row, " \t\r")
		if len(row) == 0 {
			continue
		}
		for k := dim - 1; k >= 0; k-- {
			i := bytes.LastIndexAny(row, " \t")
			if i < 0 {
				c.err = srcerr.At(name, line, "row has %d numbers after the word, want %d", dim-1-k, dim)
				return
			}
			field := row[i+1:]
			f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(field), len(field)), 32)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				c.err = srcerr.At(name, line, "field %q is not a finite number (want a word then %d numbers; found %d)", clip(field), dim, dim-1-k)
				return
			}
			vec[k] = float32(f)
			row = bytes.TrimRight(row[:i], " \t")
		}
		if len(row) == 0 {
			c.err = srcerr.At(name, line, "row has no word before its %d numbers", dim)
			return
		}
		c.words = append(c.words, string(row))
		c.vecs = append(c.vecs, vec...)
	}
	c.data = nil
}

// parseBinary reads word2vec's binary format: a text header "N D\n", then
// per vector the word, a space, D little-endian float32s and optionally a
// newline.
func parseBinary(ctx context.Context, r io.Reader, name string) (*Embedding, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	head, err := br.ReadString('\n')
	if err != nil {
		if err == io.EOF && head == "" {
			return nil, srcerr.At(name, 0, "empty file")
		}
		return nil, srcerr.At(name, 1, "reading header: %w", err)
	}
	f := strings.Fields(head)
	if len(f) != 2 || !isInt(f[0]) || !isInt(f[1]) {
		return nil, srcerr.At(name, 1, `want a "<count> <dimension>" header, got %q`, clip([]byte(head)))
	}
	n, _ := strconv.Atoi(f[0])
	dim, _ := strconv.Atoi(f[1])
	if dim <= 0 || dim > 1<<16 {
		return nil, srcerr.At(name, 1, "implausible dimension %d", dim)
	}
	e := &Embedding{Format: "word2vec-binary", Dim: dim, Words: make([]string, 0, n), Data: make([]float32, 0, n*dim)}
	seen := make(map[string]bool, n)
	raw := make([]byte, 4*dim)
	vec := make([]float32, dim)
	for i := 0; i < n; i++ {
		if i&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		w, err := br.ReadString(' ')
		if err != nil {
			return nil, srcerr.At(name, 0, "vector %d of %d: word: %w (truncated file?)", i+1, n, eofIsUnexpected(err))
		}
		w = strings.TrimLeft(strings.TrimSuffix(w, " "), "\n")
		if _, err := io.ReadFull(br, raw); err != nil {
			return nil, srcerr.At(name, 0, "vector %d of %d (%q): %w (truncated file?)", i+1, n, w, eofIsUnexpected(err))
		}
		for k := range vec {
			vec[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
		}
		e.add(seen, w, vec)
	}
	if len(e.Words) == 0 {
		return nil, srcerr.At(name, 0, "no vectors")
	}
	return e, nil
}

// add appends a row by the package's rules: non-UTF-8 words and repeated
// words are skipped and counted.
func (e *Embedding) add(seen map[string]bool, w string, vec []float32) {
	switch {
	case !utf8.ValidString(w):
		e.Skipped.InvalidUTF8++
	case seen[w]:
		e.Skipped.Duplicates++
	default:
		seen[w] = true
		e.Words = append(e.Words, w)
		e.Data = append(e.Data, vec...)
	}
}

func eofIsUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
