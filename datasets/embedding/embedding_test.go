package embedding

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xp-nlp/xp/internal/srcerr"
	"github.com/xp-nlp/xp/internal/xio"
)

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func word2vecBinary(words []string, vecs [][]float32) []byte {
	var b bytes.Buffer
	b.WriteString("3 2\n"[:0])
	b.WriteString(strconv.Itoa(len(words)) + " " + strconv.Itoa(len(vecs[0])) + "\n")
	for i, w := range words {
		b.WriteString(w + " ")
		for _, f := range vecs[i] {
			binary.Write(&b, binary.LittleEndian, f)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestFormats(t *testing.T) {
	dir := t.TempDir()
	glove := "the 0.5 -1 2\n, 1e-3 0 0\nnew\u00a0york 1 2 3\n"
	vec := "3 3\n" + strings.ReplaceAll(glove, "\n", " \n") // fastText rows end in a space
	want := &Embedding{
		Words: []string{"the", ",", "new\u00a0york"}, Dim: 3,
		Data: []float32{0.5, -1, 2, 1e-3, 0, 0, 1, 2, 3},
	}
	bin := word2vecBinary(want.Words, [][]float32{{0.5, -1, 2}, {1e-3, 0, 0}, {1, 2, 3}})
	cases := []struct {
		file   string
		data   []byte
		format string
	}{
		{"g.txt", []byte(glove), "glove"},
		{"g.txt.gz", gzipped([]byte(glove)), "glove"},
		{"v.vec", []byte(vec), "vec"},
		{"v.vec.gz", gzipped([]byte(vec)), "vec"},
		{"crlf.vec", []byte(strings.ReplaceAll(vec, "\n", "\r\n")), "vec"},
		{"w.bin", bin, "word2vec-binary"},
		{"w.bin.gz", gzipped(bin), "word2vec-binary"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			p := writeFile(t, dir, c.file, c.data)
			e, err := Load(context.Background(), p, Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if e.Format != c.format || !reflect.DeepEqual(e.Words, want.Words) || e.Dim != 3 || !reflect.DeepEqual(e.Data, want.Data) {
				t.Errorf("got %s %q %v", e.Format, e.Words, e.Data)
			}
			sum, _ := xio.SHA256File(p)
			if e.SourceSHA256 != sum {
				t.Errorf("SourceSHA256 %s, want %s", e.SourceSHA256, sum)
			}
			if i, ok := e.Index(","); !ok || i != 1 {
				t.Errorf("Index(,) = %d %v", i, ok)
			}
		})
	}
}

func TestZip(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "v.zip", zipOf(t, map[string]string{"v.vec": "1 2\nx 1 2\n"}))
	e, err := Load(context.Background(), p, Options{})
	if err != nil || e.Len() != 1 || e.Data[1] != 2 {
		t.Fatalf("%v %v", e, err)
	}
	sum, _ := xio.SHA256File(p)
	if e.SourceSHA256 != sum {
		t.Error("zip source checksum is not the archive's")
	}
}

func TestRules(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "d.txt", []byte("a 1 1\nb 2 2\na 3 3\n\xff\xfe 4 4\n\nc 5 5\n"))
	e, err := Load(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(e.Words, []string{"a", "b", "c"}) || e.Data[0] != 1 || e.Skipped != (Skipped{Duplicates: 1, InvalidUTF8: 1}) {
		t.Errorf("words %q data %v skipped %+v", e.Words, e.Data, e.Skipped)
	}
	top := e.Top(2)
	r, missing := e.Restrict([]string{"c", "a", "zzz"})
	if top.Len() != 2 || top.Restriction != "top 2" || !reflect.DeepEqual(r.Words, []string{"a", "c"}) || missing != 1 ||
		!reflect.DeepEqual(r.Vector(1), []float32{5, 5}) || !strings.HasPrefix(r.Restriction, "word list (2 of 3") {
		t.Errorf("top %v %q; restrict %q %v %q missing %d", top.Words, top.Restriction, r.Words, r.Data, r.Restriction, missing)
	}
}

// shortFirstRow is a GloVe-format file of 300-d vectors whose first row
// lost a value.
var shortFirstRow = func() string {
	var b strings.Builder
	for i := 0; i <= 40; i++ {
		b.WriteString("w" + strconv.Itoa(i))
		n := 300
		if i == 0 {
			n = 299
		}
		for j := 0; j < n; j++ {
			b.WriteString(" 0.1")
		}
		b.WriteByte('\n')
	}
	return b.String()
}()

func TestBadInput(t *testing.T) {
	long := strings.Repeat("word 0.1 0.2 0.3\n", 50000)
	trunc := gzipped([]byte("50000 3\n" + long))
	cases := []struct {
		name, file string
		data       []byte
		line       int
		msg        string
	}{
		{"too few numbers", "a.txt", []byte("a 1 2 3\nb 1 2\nc 1 2 3\n"), 2, "row has 3 fields, want at least 4: a word and 3 numbers (dimension 3: 2 of the first 3 rows have 4 fields)"},
		{"too few numbers vec", "a.vec", []byte("2 3\na 1 2 3\n1 2\n"), 3, "row has 2 fields, want at least 4: a word and 3 numbers (dimension 3: from the header)"},
		// A short first row must not set the dimension: every later row
		// would parse as a vector one shorter whose word is glued to a
		// number, and every token of a run would be out of vocabulary.
		{"short first row", "g.txt", []byte(shortFirstRow), 1, "row has 300 fields, want at least 301: a word and 300 numbers (dimension 300: 40 of the first 41 rows have 301 fields)"},
		{"too many numbers", "a.txt", []byte("a 0.1 0.2 0.3\nb 0.1 0.2 0.3 0.4\nc 0.1 0.2 0.3\n"), 2, `row has more than 3 numbers: what is left for the word, "b 0.1", ends in one`},
		{"too many numbers vec", "a.vec", []byte("2 2\na 0.5 1e-3\nb -0.25 0.5 0.75\n"), 3, "row has more than 2 numbers"},
		{"no word", "a.txt", []byte("a 1 2 3\n4 5 6\nc 1 2 3\n"), 2, "row has 3 fields, want at least 4"},
		{"not a number", "a.txt", []byte("a 1 2 3\nb 1 x 3\n"), 2, `"x" is not a finite number`},
		{"NaN", "a.txt", []byte("a 1 NaN 3\n"), 1, "not a finite number"},
		{"empty", "e.txt", nil, 1, "empty file"},
		{"empty vec.gz", "e.vec.gz", gzipped(nil), 1, "empty file"},
		{"count mismatch", "c.vec", []byte("3 2\na 1 2\nb 1 2\n"), 4, "header announces 3 vectors, file has 2"},
		{"truncated gzip", "t.vec.gz", trunc[:len(trunc)/2], -1, "unexpected EOF"},
		{"truncated binary", "t.bin", word2vecBinary([]string{"a", "b"}, [][]float32{{1, 2}, {3, 4}})[:20], 0, "truncated"},
		{"glove with header", "h.txt", []byte("2 2\na 1 2\n"), -2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), c.file, c.data)
			opt := Options{}
			if c.line == -2 {
				opt.Format = "glove"
				c.line, c.msg = 1, "no header"
			}
			_, err := Load(context.Background(), p, opt)
			var se *srcerr.Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v has no file position", err)
			}
			if se.File != p || (c.line >= 0 && se.Line != c.line) || (c.line == -1 && se.Line < 2) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("got %q (line %d), want %s:%d containing %q", err, se.Line, p, c.line, c.msg)
			}
		})
	}
}

func TestCache(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	var b strings.Builder
	b.WriteString("1000 4\n")
	for i := 0; i < 1000; i++ {
		b.WriteString("w" + strings.Repeat("x", i%7) + strconv.Itoa(i) + string(rune('a'+i/26%26)) + string(rune('a'+i%26)))
		b.WriteString(" 0.25 -1.5 3 1e-7\n")
	}
	p := writeFile(t, dir, "c.vec", []byte(b.String()))
	first, err := Load(context.Background(), p, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Load(context.Background(), p, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first.Words, again.Words) || !reflect.DeepEqual(first.Data, again.Data) ||
		first.SourceSHA256 != again.SourceSHA256 || first.Skipped != again.Skipped || first.Format != again.Format {
		t.Fatal("cached load differs from the first load")
	}
	// A new mtime over the same bytes (data copied elsewhere) keeps the
	// cache, once checked by sha256, and records the new mtime.
	os.Chtimes(p, time.Now(), time.Now().Add(time.Hour))
	var log strings.Builder
	touched, err := Load(context.Background(), p, Options{CacheDir: cache, Log: &log})
	if err != nil || !reflect.DeepEqual(touched.Data, first.Data) || !strings.Contains(log.String(), "embedding cache kept") {
		t.Fatalf("touched source: %v, log %q", err, log.String())
	}
	log.Reset()
	if _, err := Load(context.Background(), p, Options{CacheDir: cache, Log: &log}); err != nil || log.Len() > 0 {
		t.Fatalf("after the refresh: %v, log %q", err, log.String())
	}
	cfile := cachePath(cache, p)
	// A damaged cache is rebuilt, not trusted.
	raw, _ := os.ReadFile(cfile)
	raw[len(raw)-3] ^= 0xff
	os.WriteFile(cfile, raw, 0o644)
	fixed, err := Load(context.Background(), p, Options{CacheDir: cache})
	if err != nil || !reflect.DeepEqual(fixed.Data, first.Data) {
		t.Fatalf("damaged cache was used: %v", err)
	}
	// Other bytes of the same size at a new mtime invalidate the cache.
	same := []byte(strings.Replace(b.String(), " 0.25 ", " 0.75 ", 1))
	os.WriteFile(p, same, 0o644)
	os.Chtimes(p, time.Now(), time.Now().Add(2*time.Hour))
	log.Reset()
	resized, err := Load(context.Background(), p, Options{CacheDir: cache, Log: &log})
	if err != nil || resized.Data[0] != 0.75 || !strings.Contains(log.String(), "stale") {
		t.Fatalf("same-size change: cache used (%v, log %q)", err, log.String())
	}
	// A changed source invalidates the cache.
	os.WriteFile(p, []byte("1 4\nnew 1 2 3 4\n"), 0o644)
	os.Chtimes(p, time.Now(), time.Now().Add(time.Second))
	changed, err := Load(context.Background(), p, Options{CacheDir: cache})
	if err != nil || changed.Len() != 1 || changed.Words[0] != "new" {
		t.Fatalf("stale cache used: %v %v", changed, err)
	}
}

func TestCancel(t *testing.T) {
	p := writeFile(t, t.TempDir(), "big.txt", []byte(strings.Repeat("w 1 2 3\n", 200000)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, p, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled load: %v", err)
	}
}

var _ = math.Pi

// TestLyingHeader: a header's count is a claim the file's size bounds:
// .vec, word2vec binary and a gzipped .vec whose headers announce 80
// million vectors over a few thousand rows are refused as truncated,
// having allocated a few megabytes, not the announced gigabytes (a 2 MB
// file announcing two billion ended in "fatal error: runtime: out of
// memory").
func TestLyingHeader(t *testing.T) {
	dir := t.TempDir()
	var text bytes.Buffer
	text.WriteString("80000000 50\n")
	for i := range 4000 {
		text.WriteString("w" + strings.Repeat("x", i%7) + strconv.Itoa(i))
		for range 50 {
			text.WriteString(" 0.1")
		}
		text.WriteString("\n")
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(text.Bytes())
	zw.Close()
	var bin bytes.Buffer
	bin.WriteString("80000000 50\n")
	for i := range 4000 {
		bin.WriteString("w" + strconv.Itoa(i) + " ")
		binary.Write(&bin, binary.LittleEndian, make([]float32, 50))
	}
	for _, f := range []struct {
		name string
		b    []byte
	}{{"lying.vec", text.Bytes()}, {"lying.vec.gz", gz.Bytes()}, {"lying.bin", bin.Bytes()}, {"bomb.vec.gz", gzipped(append([]byte("2000000000 65536\n"), make([]byte, 1<<20)...))}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, f.b, 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Load(context.Background(), p, Options{})
		runtime.ReadMemStats(&after)
		if f.name == "bomb.vec.gz" {
			// An 1 KB gzip whose header announces 2·10^9 × 65,536 (64 GiB
			// were allocated for it) and whose one row has no end.
			if err == nil || !strings.Contains(err.Error(), "bomb.vec.gz:2:") {
				t.Errorf("%s: %v, want its row refused at line 2", f.name, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), "80000000") {
			t.Errorf("%s: %v, want the header refused", f.name, err)
		}
		if mb := (after.TotalAlloc - before.TotalAlloc) >> 20; mb > 400 {
			t.Errorf("%s: %d MB allocated for a %d kB file", f.name, mb, len(f.b)>>10)
		}
	}
}

// TestNotRegularOrNotFinite: a device as vectors (/dev/zero was read for
// ever) is refused naming what it is, without reading; a word2vec binary
// vector holding NaN or ∞ is refused naming the word (it loaded, and the
// word privatized to one fixed word); a binary file whose "word" never
// ends is refused at the reader's buffer.
func TestNotRegularOrNotFinite(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := Load(context.Background(), "/dev/zero", Options{}); err == nil || !strings.Contains(err.Error(), "character device, not a regular file") {
			t.Errorf("/dev/zero: %v", err)
		}
	}
	dir := t.TempDir()
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		p := writeFile(t, dir, "nan.bin", word2vecBinary([]string{"ok", "evil"}, [][]float32{{1, 2}, {3, bad}}))
		if _, err := Load(context.Background(), p, Options{}); err == nil || !strings.Contains(err.Error(), `("evil"): component 2`) {
			t.Errorf("%v in a binary vector: %v", bad, err)
		}
	}
	p := writeFile(t, dir, "noword.bin", append([]byte("1 2\n"), bytes.Repeat([]byte("x"), 3<<20)...))
	if _, err := Load(context.Background(), p, Options{}); err == nil || !strings.Contains(err.Error(), "a word of more than") {
		t.Errorf("a word without end: %v", err)
	}
}
