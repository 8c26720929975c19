package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/results"
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

// TestPaperTablesShort: the reproduction document shows a run's tables
// up to paperRows rows; a longer one is named with its size and a link to
// the run's section of the page, which shows it whole (the document ran
// to 2,800 lines of tables before).
func TestPaperTablesShort(t *testing.T) {
	stats := func(n int) []results.StatRow {
		var rows []results.StatRow
		for i := range n {
			rows = append(rows, results.StatRow{Analysis: "bayes-adversary", Setting: "laplace", Epsilon: float64(i + 1), Seeds: 1, Names: []string{"E_M"}, Mean: []float64{0.5}, SD: []float64{0}})
		}
		return rows
	}
	short := paperTables(nil, stats(paperRows), "records/paper/r", "reproduction.html#run-r")
	if strings.Count(short, "| laplace |") != paperRows || strings.Contains(short, "reproduction.html#run-r") {
		t.Errorf("%d rows not shown whole:\n%s", paperRows, short)
	}
	long := paperTables(nil, stats(paperRows+1), "records/paper/r", "reproduction.html#run-r")
	if strings.Contains(long, "| laplace |") || !strings.Contains(long, fmt.Sprintf("%d rows: on [the reproduction page](reproduction.html#run-r)", paperRows+1)) {
		t.Errorf("%d rows shown, or not linked:\n%s", paperRows+1, long)
	}
}
