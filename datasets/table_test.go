package datasets

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/internal/xio"
)

// TestTable: a user's CSV, TSV or JSONL file with named columns; labels
// sorted, the same for train and test; sentence pairs from text2; errors
// at file and line.
func TestTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csv := write("train.csv", "id,review,stars\n1,\"Great, really\",pos\n2,awful,neg\n3,\"multi\nline\",pos\n")
	tsv := write("test.tsv", "review\tstars\nfine \"enough\"\tpos\nbad\tneg\n")
	jsonl := write("pairs.jsonl", `{"q": "who?", "a": "me", "y": 1}`+"\n\n"+`{"q": "why?", "a": "no", "y": 0}`+"\n")
	ctx := context.Background()
	d, err := Load(ctx, "", "table", Options{Path: csv, Table: TableOptions{Text: "review", Label: "stars", TestPath: tsv}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.Labels, ",") != "neg,pos" || len(d.Splits["train"]) != 3 || len(d.Splits["test"]) != 2 || d.Pair {
		t.Fatalf("labels %v, splits %d/%d", d.Labels, len(d.Splits["train"]), len(d.Splits["test"]))
	}
	if x := d.Splits["train"][2]; x.Text != "multi\nline" || x.Label != 1 || x.ID != "train.csv:4" {
		t.Errorf("quoted multi-line row: %+v", x)
	}
	if x := d.Splits["test"][0]; x.Text != `fine "enough"` || x.Label != 1 {
		t.Errorf("TSV row with quotes: %+v", x)
	}
	p, err := Load(ctx, "", "table", Options{Path: jsonl, Table: TableOptions{Text: "q", Text2: "a", Label: "y"}})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Pair || strings.Join(p.Labels, ",") != "0,1" || p.Splits["train"][0].Text2 != "me" || p.Splits["train"][1].ID != "pairs.jsonl:3" {
		t.Errorf("pairs: %+v %v", p.Splits["train"], p.Labels)
	}
	for _, c := range []struct{ file, body, want string }{
		{"nocol.csv", "text,y\na,1\n", `nocol.csv:1: header ["text" "y"] has no "label" column`},
		{"empty.csv", "text,label\na,1\n ,0\n", `empty.csv:3: empty "text"`},
		{"bad.jsonl", "{\"text\": \"a\", \"label\": 1}\n{text\n", "bad.jsonl:2: not a JSON object"},
		{"one.jsonl", "{\"text\": \"a\", \"label\": 1}\n{\"text\": \"b\", \"label\": 1}\n", `1 distinct labels ["1"]`},
		{"twice.jsonl", "{\"text\": \"a\", \"label\": 1}\n{\"text\": \"b\", \"label\": 0, \"text\": \"c\"}\n", `twice.jsonl:2: "text" is given twice`},
		{"x.txt", "a\n", "want a .csv, .tsv or .jsonl file"},
	} {
		_, err := Load(ctx, "", "table", Options{Path: write(c.file, c.body)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.file, err, c.want)
		}
	}
}

// TestTableLineCap: a CSV or TSV line longer than xio.MaxLine is refused
// at its file and line, the cap named, having held at most about the cap
// in memory (a 1 GB one-line CSV passed 4 GB of RSS: encoding/csv keeps a
// line whole).
func TestTableLineCap(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"long.csv", "long.tsv"} {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		sep := ","
		if strings.HasSuffix(name, ".tsv") {
			sep = "\t"
		}
		f.WriteString("review" + sep + "stars\nfine" + sep + "pos\n")
		chunk := strings.Repeat("a", 1<<20)
		for range xio.MaxLine>>20 + 8 {
			f.WriteString(chunk)
		}
		f.WriteString(sep + "neg\n")
		f.Close()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err = Load(context.Background(), "", "table", Options{Path: p, Table: TableOptions{Text: "review", Label: "stars", TestPath: p}})
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), name+":3: line longer than 67108864 bytes") {
			t.Errorf("%s: %v, want the third line refused", name, err)
		}
		if mb := (after.TotalAlloc - before.TotalAlloc) >> 20; mb > 512 {
			t.Errorf("%s: %d MB allocated for a %d MB line", name, mb, xio.MaxLine>>20+8)
		}
	}
}

// TestTableBadText: a text or label that is not UTF-8, or holds a NUL
// byte, is an error at its file and line naming the column and the byte
// (a label "neg\xff" reached xp privatize's output raw, a NUL became a
// token).
func TestTableBadText(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ body, want string }{
		"latin1.csv": {"review,stars\nfine,pos\nna\xefve,neg\n", `latin1.csv:3: "review" is not UTF-8 text (byte 3)`},
		"label.tsv":  {"review\tstars\nfine\tpos\nbad\tneg\xff\n", `label.tsv:3: "stars" is not UTF-8 text (byte 4)`},
		"nul.jsonl":  {`{"review": "fine", "stars": "pos"}` + "\n" + `{"review": "a\u0000b", "stars": "neg"}` + "\n", `nul.jsonl:2: "review" holds a NUL byte (at 2)`},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(context.Background(), "", "table", Options{Path: p, Table: TableOptions{Text: "review", Label: "stars", TestPath: p}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
