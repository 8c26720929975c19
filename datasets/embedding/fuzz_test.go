package embedding

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// FuzzParseText: any bytes read as a .vec or GloVe text file give an
// embedding whose every row has the dimension and whose words are
// distinct, or an error at the file's name — never a panic, and never an
// allocation a header's claim alone sizes (TestLyingHeader).
func FuzzParseText(f *testing.F) {
	for _, s := range []string{"2 3\na 1 2 3\nb 4 5 6\n", "a 1 2\nb 3 4\n", "1 2\nx 1e40 2\n", "-5 50\n", "2000000000 50\na 1\n",
		"2 2\na 1 2\na 3 4\n", "a NaN 1\n", "\xef\xbb\xbfa 1 2\n", "1 1\n\xff 1\n", "a\t1\t2\n"} {
		f.Add([]byte(s), "")
		f.Add([]byte(s), "glove")
	}
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		if format != "glove" && format != "vec" {
			format = ""
		}
		e, err := parseText(context.Background(), bytes.NewReader(data), "fuzz.vec", format, 1, int64(len(data)))
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.vec") {
				t.Errorf("error without the file's name: %v", err)
			}
			return
		}
		checkEmbedding(t, e)
	})
}

// FuzzParseBinary: the same for word2vec's binary format.
func FuzzParseBinary(f *testing.F) {
	row := func(w string, xs ...float32) []byte {
		b := append([]byte(w), ' ')
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		return append(b, '\n')
	}
	good := append([]byte("2 2\n"), append(row("a", 1, 2), row("b", 3, 4)...)...)
	f.Add(good)
	f.Add([]byte("3 2\n"))
	f.Add([]byte("1 100000000\na "))
	f.Add(append([]byte("1 1\n"), row("", 1)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := parseBinary(context.Background(), bytes.NewReader(data), "fuzz.bin", int64(len(data)))
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.bin") {
				t.Errorf("error without the file's name: %v", err)
			}
			return
		}
		checkEmbedding(t, e)
	})
}

func checkEmbedding(t *testing.T, e *Embedding) {
	t.Helper()
	if e == nil || e.Dim <= 0 || len(e.Data) != len(e.Words)*e.Dim {
		t.Fatalf("embedding of %d words × %d dims holds %d numbers", len(e.Words), e.Dim, len(e.Data))
	}
	seen := map[string]bool{}
	for _, w := range e.Words {
		if seen[w] {
			t.Fatalf("word %q twice", w)
		}
		seen[w] = true
	}
}
