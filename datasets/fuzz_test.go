package datasets

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReadTable: a user's CSV, TSV or JSONL file, whatever its bytes,
// gives rows of non-empty UTF-8 text and labels without NUL, or an error
// naming the file — never a panic.
func FuzzReadTable(f *testing.F) {
	for _, s := range []struct{ ext, data string }{
		{"csv", "text,label\nfine film,pos\n\"a, quoted\nline\",neg\n"},
		{"csv", "text,label\n\"unclosed,pos\n"},
		{"csv", "label\npos\n"},
		{"csv", "\xef\xbb\xbftext,label\nx,1\n"},
		{"csv", "text,label\nneg\xff,1\n"},
		{"tsv", "text\tlabel\nfine \"film\tpos\n"},
		{"tsv", "text\tlabel\na\x00b\tneg\n"},
		{"jsonl", "{\"text\": \"fine\", \"label\": 1}\n\n{\"text\": \"bad\", \"label\": true}\n"},
		{"jsonl", "{\"text\": [1], \"label\": 1}\n"},
		{"jsonl", "not json\n"},
	} {
		f.Add(s.ext, []byte(s.data))
	}
	f.Fuzz(func(t *testing.T, ext string, data []byte) {
		switch ext {
		case "csv", "tsv", "jsonl":
		default:
			ext = "csv"
		}
		path := filepath.Join(t.TempDir(), "fuzz."+ext)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := readTable(context.Background(), path, TableOptions{})
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz."+ext) {
				t.Errorf("error without the file's name: %v", err)
			}
			return
		}
		for _, r := range rows {
			for _, v := range []string{r.text, r.label} {
				if strings.TrimSpace(v) == "" || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
					t.Fatalf("row %s: text %q, label %q", r.id, r.text, r.label)
				}
			}
		}
	})
}
