package embedding

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
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
	// KeepCache reads a cache entry when there is one but writes none (a
	// dry run writes nothing).
	KeepCache bool
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
// cache was written (its size and mtime, or where only the mtime moved,
// its sha256), and writes the cache after a first load.
func Load(ctx context.Context, path string, opt Options) (*Embedding, error) {
	file, _ := xio.SplitMember(path)
	st, err := xio.Regular(file) // /dev/zero would be read for ever
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	if opt.CacheDir != "" {
		e, refresh, err := readCache(opt.CacheDir, path, st)
		if err == nil {
			if refresh && !opt.KeepCache {
				// Recorded under the new mtime, so the next load need
				// not hash the source again.
				if opt.Log != nil {
					fmt.Fprintf(opt.Log, "embedding cache kept: %s has a new mtime but the same sha256\n", file)
				}
				if err := writeCache(opt.CacheDir, path, st, e); err != nil {
					return nil, fmt.Errorf("embedding cache: %w", err)
				}
			}
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
	if opt.CacheDir != "" && !opt.KeepCache {
		if err := writeCache(opt.CacheDir, path, st, e); err != nil {
			return nil, fmt.Errorf("embedding cache: %w", err)
		}
	}
	return e, nil
}

func parse(ctx context.Context, path string, size int64, opt Options) (*Embedding, error) {
	format := opt.Format
	file, _ := xio.SplitMember(path)
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
	case "word2vec-binary", "", "glove", "vec":
		hint := int64(0) // uncompressed size, for preallocation
		if !strings.HasSuffix(file, ".gz") && !strings.HasSuffix(file, ".zip") {
			hint = size
		}
		if format == "word2vec-binary" {
			e, err = parseBinary(ctx, rc, name, hint)
		} else {
			e, err = parseText(ctx, xio.CapLines(rc, MaxRow), name, format, opt.Workers, hint)
			var long *xio.LineTooLong
			if errors.As(err, &long) {
				err = srcerr.At(name, long.Line, "a row longer than %d bytes (a vector of 65,536 numbers is a few MB; no line breaks?)", MaxRow)
			}
		}
	default:
		return nil, fmt.Errorf("embedding %s: unknown format %q (glove, vec, word2vec-binary)", name, format)
	}
	if err != nil {
		return nil, err
	}
	// Drain what the parser did not read (gzip trailer, zip remainder) so
	// the hash covers the whole file; a damaged trailer is an error.
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return nil, srcerr.Wrap(name, 0, fmt.Errorf("reading to the end: %w", err))
	}
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
	file, _ := xio.SplitMember(path)
	if strings.HasSuffix(file, ".zip") {
		return xio.Open(path)
	}
	f, err := xio.OpenRegular(file)
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

// MaxRow is the longest row of a text vector file read: a row of the
// largest dimension accepted (65,536) at 60 characters a number is under
// 4 MiB. A file without line breaks (/dev/zero, a wrong file) stops there.
const MaxRow = 16 << 20

// SniffRows is how many rows of a file without a header decide its
// dimension: D is one less than the field count most of them have.
const SniffRows = 1000

// maxPrealloc is the most numbers (float32s) allocated ahead of the data
// where a file's size cannot bound a header's count (compressed files):
// beyond it the matrix grows as rows arrive, as far as the stream holds
// them.
const maxPrealloc = 1 << 24

// preallocRows is how many rows of dim numbers to allocate for a header
// announcing want (−1: none): never more than a file of size bytes (0:
// unknown) can hold at minRow bytes a row, nor, where the size is
// unknown, more rows than maxPrealloc numbers fill. A header is a claim,
// not a measurement: one announcing two billion vectors in a 2 MB file
// allocated them, and an 851-byte .vec.gz announcing 2·10^9 × 65,536
// allocated 64 GiB (a cap in rows does not see the dimension).
func preallocRows(want int, size int64, minRow, dim int) int {
	if want <= 0 {
		return want
	}
	if size <= 0 {
		return min(want, max(1, maxPrealloc/max(dim, 1)))
	}
	return int(min(int64(want), size/int64(max(minRow, 1))+1))
}

// layout is what the start of a text file says about the rest.
type layout struct {
	format string
	dim    int
	want   int    // vectors announced by a header, −1 without one
	line   int    // number of the first data line
	why    string // how dim was decided, for error messages
}

func parseText(ctx context.Context, r io.Reader, name, format string, workers int, size int64) (*Embedding, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	lay, pending, err := sniff(br, name, format)
	if err != nil {
		return nil, err
	}
	e := &Embedding{Format: lay.format, Dim: lay.dim}
	capHint := preallocRows(lay.want, size, 2*lay.dim+2, lay.dim) // a row is at least a word and dim numbers of one digit and a space
	if lay.want < 0 && size > 0 && len(pending) > 0 {
		// No header: estimate the rows from those sniffed so the matrix is
		// allocated once instead of regrown (and copied) ~20 times.
		rows := max(1, bytes.Count(pending, []byte{'\n'}))
		capHint = int(float64(size)/float64(len(pending))*float64(rows)*1.05) + 16
	}
	if capHint > 0 {
		e.Words = make([]string, 0, capHint)
		e.Data = make([]float32, 0, capHint*e.Dim)
	}
	last, err := parseChunks(ctx, br, pending, name, lay, workers, e, max(capHint, 1024))
	if err != nil {
		return nil, err
	}
	if len(e.Words) == 0 {
		return nil, srcerr.At(name, 0, "no vectors")
	}
	if rows := len(e.Words) + e.Skipped.Duplicates + e.Skipped.InvalidUTF8; lay.want >= 0 && rows != lay.want {
		return nil, srcerr.At(name, last, "header announces %d vectors, file has %d (truncated download?)", lay.want, rows)
	}
	return e, nil
}

// sniff decides the file's layout: a "<count> <dimension>" first line is
// a header (.vec, word2vec text); otherwise (GloVe) the dimension is one
// less than the dominant field count of the first SniffRows rows, so a
// damaged first row cannot set it. It returns the bytes read that are
// still to be parsed.
func sniff(br *bufio.Reader, name, format string) (layout, []byte, error) {
	first, err := br.ReadBytes('\n')
	if err != nil && err != io.EOF {
		return layout{}, nil, srcerr.Wrap(name, 1, err)
	}
	if len(bytes.TrimSpace(first)) == 0 {
		return layout{}, nil, srcerr.At(name, 1, "empty file or empty first line")
	}
	if f := strings.Fields(string(first)); len(f) == 2 && isInt(f[0]) && isInt(f[1]) {
		if format == "glove" {
			return layout{}, nil, srcerr.At(name, 1, "GloVe files have no header, this one starts %q", bytes.TrimRight(first, "\r\n"))
		}
		lay := layout{format: "vec", want: atoi(f[0]), dim: atoi(f[1]), line: 2, why: "from the header"}
		return lay, nil, checkDim(name, lay)
	}
	if format == "vec" {
		return layout{}, nil, srcerr.At(name, 1, `want a "<count> <dimension>" header, got %q`, clip(bytes.TrimRight(first, "\r\n")))
	}
	pending := first
	counts := map[int]int{len(splitFields(bytes.TrimRight(first, " \t\r\n"))): 1}
	for rows := 1; rows < SniffRows; rows++ {
		line, err := br.ReadBytes('\n')
		pending = append(pending, line...)
		if row := bytes.TrimRight(line, " \t\r\n"); len(row) > 0 {
			counts[len(splitFields(row))]++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return layout{}, nil, srcerr.Wrap(name, rows+1, err)
		}
	}
	fields, seen := 0, 0
	for f, n := range counts {
		if n > seen || (n == seen && f < fields) {
			fields, seen = f, n
		}
	}
	lay := layout{format: "glove", dim: fields - 1, want: -1, line: 1,
		why: fmt.Sprintf("%d of the first %d rows have %d fields", seen, sum(counts), fields)}
	return lay, pending, checkDim(name, lay)
}

func checkDim(name string, lay layout) error {
	if lay.dim <= 0 || lay.dim > 1<<16 {
		return srcerr.At(name, 1, "implausible dimension %d (%s)", lay.dim, lay.why)
	}
	return nil
}

func sum(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// parseChunks parses the rest of the file in parallel: one goroutine cuts
// it into chunks of whole lines (pending first), workers parse them, and
// the rows are added in file order. It returns the last line's number.
func parseChunks(ctx context.Context, br *bufio.Reader, pending []byte, name string, lay layout, workers int, e *Embedding, seenHint int) (int, error) {
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
				parseChunk(c, name, lay)
				done <- c
			}
		}()
	}
	var readErr error
	last := lay.line
	go func() {
		defer func() { close(jobs); wg.Wait(); close(done) }()
		last, readErr = readChunks(ctx, br, pending, name, lay.line, jobs)
	}()
	waiting := map[int]*chunk{}
	next := 0
	seen := make(map[string]bool, seenHint)
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
	}
	return last, cmp.Or(firstErr, readErr, ctx.Err())
}

// readChunks cuts the input into chunks of whole lines, pending first,
// numbering their first lines from line; it returns the number of the
// line after the last.
func readChunks(ctx context.Context, br *bufio.Reader, pending []byte, name string, line int, jobs chan<- *chunk) (int, error) {
	for seq := 0; ; {
		buf := make([]byte, len(pending), chunkSize+len(pending)+1024)
		copy(buf, pending)
		n, err := fill(br, buf[len(buf):chunkSize+len(pending)])
		buf = buf[:len(buf)+n]
		pending = nil
		eof := err == io.EOF
		if err != nil && !eof {
			return line, srcerr.Wrap(name, line+bytes.Count(buf, []byte{'\n'})+1, err)
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
					return line, srcerr.Wrap(name, line, err)
				}
			}
		}
		if len(buf) > 0 {
			select {
			case jobs <- &chunk{seq: seq, line: line, data: buf}:
			case <-ctx.Done():
				return line, ctx.Err()
			}
			seq++
			line += bytes.Count(buf, []byte{'\n'})
		}
		if eof {
			return line, nil
		}
	}
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
// (one field or more: GloVe 840B has words with spaces) is the word. A row
// with fewer than dim+1 fields, or a non-number among its last dim fields,
// is an error at its line.
func parseChunk(c *chunk, name string, lay layout) {
	data, dim := c.data, lay.dim
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
		whole := row
		for k := dim - 1; k >= 0 && c.err == nil; k-- {
			i := bytes.LastIndexAny(row, " \t")
			field := row[i+1:]
			f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(field), len(field)), 32)
			if i < 0 || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				c.err = rowError(name, line, whole, field, lay)
			}
			vec[k] = float32(f)
			row = bytes.TrimRight(row[:max(i, 0)], " \t")
		}
		if c.err == nil && len(row) == 0 {
			c.err = rowError(name, line, whole, nil, lay)
		}
		if c.err == nil && extraNumber(row) {
			c.err = srcerr.At(name, line, "row has more than %d numbers: what is left for the word, %q, ends in one (dimension %d: %s); every row must have a word and exactly %d numbers",
				dim, clip(row), dim, lay.why, dim)
		}
		if c.err != nil {
			return
		}
		c.words = append(c.words, string(row))
		c.vecs = append(c.vecs, vec...)
	}
	c.data = nil
}

// extraNumber reports whether what a row leaves for its word after its
// last dim numbers has several fields, the last a decimal number
// ("0.1234", "-1e-05"): a row with more numbers than the others, whose
// first would otherwise be taken into the word. Words with spaces (GloVe
// 840B has a few) do not end in a decimal number.
func extraNumber(word []byte) bool {
	i := bytes.LastIndexAny(word, " \t")
	if i < 0 {
		return false
	}
	last := word[i+1:]
	if !bytes.ContainsAny(last, ".eE") {
		return false
	}
	_, err := strconv.ParseFloat(string(last), 64)
	return err == nil
}

// rowError says what is wrong with a row that did not parse: too few
// fields for a word and dim numbers, or a field that is not a number.
func rowError(name string, line int, row, field []byte, lay layout) error {
	if n := countFields(row); n < lay.dim+1 {
		return srcerr.At(name, line, "row has %d fields, want at least %d: a word and %d numbers (dimension %d: %s)", n, lay.dim+1, lay.dim, lay.dim, lay.why)
	}
	return srcerr.At(name, line, "field %q is not a finite number (want a word then %d numbers)", clip(field), lay.dim)
}

// countFields counts the space- or tab-separated fields of a row.
func countFields(row []byte) int {
	n, in := 0, false
	for _, b := range row {
		sep := b == ' ' || b == '\t'
		if !sep && !in {
			n++
		}
		in = !sep
	}
	return n
}

// parseBinary reads word2vec's binary format: a text header "N D\n", then
// per vector the word, a space, D little-endian float32s and optionally a
// newline.
func parseBinary(ctx context.Context, r io.Reader, name string, size int64) (*Embedding, error) {
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
	if n < 0 {
		return nil, srcerr.At(name, 1, "header announces %d vectors", n)
	}
	rows := preallocRows(n, size, 4*dim+2, dim) // a word of one byte, a space and dim float32s
	e := &Embedding{Format: "word2vec-binary", Dim: dim, Words: make([]string, 0, rows), Data: make([]float32, 0, rows*dim)}
	seen := make(map[string]bool, rows)
	raw := make([]byte, 4*dim)
	vec := make([]float32, dim)
	for i := 0; i < n; i++ {
		if i&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		word, err := br.ReadSlice(' ') // at most the reader's buffer (1 MiB): /dev/zero is no word
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, srcerr.At(name, 0, "vector %d of %d: a word of more than %d bytes (not a word2vec binary file?)", i+1, n, br.Size())
		}
		if err != nil {
			return nil, srcerr.At(name, 0, "vector %d of %d: word: %w (truncated file?)", i+1, n, eofIsUnexpected(err))
		}
		w := strings.TrimLeft(strings.TrimSuffix(string(word), " "), "\n")
		if _, err := io.ReadFull(br, raw); err != nil {
			return nil, srcerr.At(name, 0, "vector %d of %d (%q): %w (truncated file?)", i+1, n, w, eofIsUnexpected(err))
		}
		for k := range vec {
			vec[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
			if f := float64(vec[k]); math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, srcerr.At(name, 0, "vector %d of %d (%q): component %d is %v, not a finite number", i+1, n, w, k+1, f)
			}
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
