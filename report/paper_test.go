package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestPaperDocs: docs/reproduction.md and docs/reproduction.html are what
// `make paper-tables` writes from the committed claims
// (configs/published.yaml) and records (records/paper): regenerated here
// into a temporary folder — from the committed page's text, so only its
// generated blocks can change — and compared byte for byte. Fails when a
// record, a claim, the code that renders them or a document changed
// without the others (run make paper-tables and commit what it writes).
func TestPaperDocs(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(".."); err != nil { // the documents name the records from the repository's root
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
	dir := t.TempDir()
	md, html := filepath.Join(dir, "reproduction.md"), filepath.Join(dir, "reproduction.html")
	committed, err := os.ReadFile("docs/reproduction.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(md, committed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := PaperDocs("configs/published.yaml", md, html, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ committed, fresh string }{{"docs/reproduction.md", md}, {"docs/reproduction.html", html}} {
		a, err := os.ReadFile(c.committed)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(c.fresh)
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from what make paper-tables writes from the records (%s); run make paper-tables", c.committed, firstDifference(a, b))
		}
	}
}

// firstDifference says where two texts first differ.
func firstDifference(a, b []byte) string {
	line := 1
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return fmt.Sprintf("first at line %d", line)
		}
		if a[i] == '\n' {
			line++
		}
	}
	return fmt.Sprintf("one is a prefix of the other, %d against %d bytes", len(a), len(b))
}
