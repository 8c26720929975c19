package xio

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestOpenFormats(t *testing.T) {
	dir := t.TempDir()
	const text = "one\r\ntwo\nthree"
	var gzb bytes.Buffer
	zw := gzip.NewWriter(&gzb)
	zw.Write([]byte(text))
	zw.Close()
	var zipb, zip2 bytes.Buffer
	for _, c := range []struct {
		buf   *bytes.Buffer
		names []string
	}{{&zipb, []string{"v.txt"}}, {&zip2, []string{"a.txt", "v.txt"}}} {
		w := zip.NewWriter(c.buf)
		for _, n := range c.names {
			f, _ := w.Create(n)
			f.Write([]byte(text))
		}
		w.Close()
	}
	files := map[string][]byte{"p.txt": []byte(text), "g.txt.gz": gzb.Bytes(), "z.zip": zipb.Bytes(), "two.zip": zip2.Bytes()}
	for n, b := range files {
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	for _, name := range []string{"p.txt", "g.txt.gz", "z.zip", "two.zip#v.txt"} {
		rc, _, err := Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		l := NewLines(rc, name)
		var got []string
		for l.Next() {
			got = append(got, l.Text())
		}
		rc.Close()
		if want := []string{"one", "two", "three"}; !reflect.DeepEqual(got, want) || l.Err() != nil {
			t.Errorf("%s: %q %v", name, got, l.Err())
		}
	}
	if _, _, err := Open(filepath.Join(dir, "two.zip")); err == nil || !strings.Contains(err.Error(), "2 files") {
		t.Errorf("ambiguous zip: %v", err)
	}
	if _, _, err := Open(filepath.Join(dir, "p.txt.gz")); err == nil {
		t.Error("missing file opened")
	}
	os.WriteFile(filepath.Join(dir, "bad.gz"), []byte("plain"), 0o644)
	if _, _, err := Open(filepath.Join(dir, "bad.gz")); err == nil || !strings.Contains(err.Error(), "not a gzip") {
		t.Errorf("plain file as .gz: %v", err)
	}
}

func TestTruncatedGzipLine(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	for i := 0; i < 10000; i++ {
		io.WriteString(zw, "a line of text that repeats\n")
	}
	zw.Close()
	f := filepath.Join(t.TempDir(), "t.gz")
	os.WriteFile(f, b.Bytes()[:b.Len()/2], 0o644)
	rc, name, err := Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	l := NewLines(rc, name)
	for l.Next() {
	}
	if l.Err() == nil || !strings.HasPrefix(l.Err().Error(), f+":") || !strings.Contains(l.Err().Error(), "unexpected EOF") {
		t.Errorf("truncated gzip: %v", l.Err())
	}
}
