package datasets

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/xp-nlp/xp/internal/srcerr"
)

// write creates files under dir from a map of relative path → content.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, s := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func rfc822(from, body string, crlf bool) string {
	s := "Message-ID: <1.2.JavaMail.evans@thyme>\nDate: Mon, 14 May 2001 16:39:00 -0700 (PDT)\nFrom: " + from +
		"\nTo: someone@enron.com\nSubject: test\nX-Folder: \\Sent Items\n\n" + body
	if crlf {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	return s
}

func TestEnronFixture(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"alice-a/sent/1.":       rfc822("alice.a@enron.com", "Budget is approved.\n", true),
		"alice-a/_sent_mail/1.": rfc822("alice.a@enron.com", "Budget  is approved.\n", false), // duplicate body
		"alice-a/sent/2.":       rfc822("alice.a@enron.com", "See below.\n\n -----Original Message-----\nFrom: Bob\nOld text", false),
		"alice-a/sent/3.":       rfc822("assistant@enron.com", "Sent on Alice's behalf.\n", false),
		"alice-a/sent/4.":       rfc822("alice.a@enron.com", "Meeting at 3.\n", false),
		"alice-a/inbox/1.":      rfc822("carol@enron.com", "Not sent mail.\n", false),
		"bob-b/sent_items/1.":   rfc822("Bob B <bob.b@enron.com>", "Fine by me.\n> quoted line\nBob\n", false),
		"bob-b/sent_items/2.":   rfc822("bob.b@enron.com", "---------------------- Forwarded by Bob B/HOU/ECT on 05/01/2001 10:00 AM ---------------------------\nfwd only", false),
		"bob-b/x/saved_sent/9.": rfc822("bob.b@enron.com", "Deep folder.\n", false),
		"carl-c/sent/1.":        rfc822("carl.c@enron.com", "Only one.\n", false),
	})
	d, err := Load(context.Background(), "", "enron", Options{Path: dir, EnronUsers: 2, Carve: []Carving{}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"alice-a", "bob-b"}; !reflect.DeepEqual(d.Labels, want) {
		t.Errorf("labels %v, want %v (the two users with most mail)", d.Labels, want)
	}
	var got []string
	for _, e := range d.Splits["train"] {
		got = append(got, d.Labels[e.Label]+": "+e.Text)
	}
	want := []string{
		"alice-a: Budget  is approved.", // _sent_mail/1. sorts first; sent/1. is its duplicate up to white space
		"alice-a: See below.",
		"alice-a: Meeting at 3.",
		"bob-b: Fine by me.\nBob",
		"bob-b: Deep folder.",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages\n%q\nwant\n%q", got, want)
	}
}

func TestFolderLayout(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"train/spam/a.txt": "buy now", "train/ham/b.txt": "hello", "train/ham/.hidden": "x",
		"test/spam/c.txt": "cheap", "test/ham/d.txt": "\xe9t\xe9", // Latin-1 "été"
	})
	d, err := Load(context.Background(), "", "folder", Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Labels, []string{"ham", "spam"}) || len(d.Splits["train"]) != 2 || len(d.Splits["test"]) != 2 {
		t.Fatalf("labels %v splits %v", d.Labels, d.Splits)
	}
	if d.Splits["test"][0].Text != "été" {
		t.Errorf("Latin-1 text read as %q", d.Splits["test"][0].Text)
	}
}

// imdbFixture writes a tiny aclImdb tree and the same as a .tar.gz.
func imdbFixture(t *testing.T) (dir, tgz string) {
	files := map[string]string{
		"aclImdb/train/pos/0_9.txt":   "Great!<br /><br />Loved it.",
		"aclImdb/train/neg/1_2.txt":   "Dull.",
		"aclImdb/test/pos/2_8.txt":    "Nice.",
		"aclImdb/test/neg/3_1.txt":    "Bad.",
		"aclImdb/train/unsup/4_0.txt": "unlabelled",
		"aclImdb/README":              "readme",
	}
	dir = t.TempDir()
	write(t, dir, files)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range sortedKeys(files) {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg})
		tw.Write([]byte(files[name]))
	}
	tw.Close()
	zw.Close()
	tgz = filepath.Join(t.TempDir(), "aclImdb_v1.tar.gz")
	if err := os.WriteFile(tgz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "aclImdb"), tgz
}

func TestIMDbDirAndArchiveAgree(t *testing.T) {
	dir, tgz := imdbFixture(t)
	a, err := Load(context.Background(), "", "imdb", Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(context.Background(), "", "imdb", Options{Path: tgz})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Splits, b.Splits) {
		t.Errorf("folder %v\narchive %v", a.Splits, b.Splits)
	}
	want := Example{ID: "train/pos/0_9", Text: "Great!  Loved it.", Label: 1, Rating: 9}
	if got := a.Splits["train"][1]; got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// Pooling train and test before a seeded 90/10 (here 50/50) split.
	p, err := Load(context.Background(), "", "imdb", Options{Path: dir, Carve: []Carving{{"train+test", "test", 0.5}}})
	if err != nil || len(p.Splits["train"]) != 2 || len(p.Splits["test"]) != 2 || len(p.Splits) != 2 {
		t.Errorf("pooled split: %v %v", p, err)
	}
	// A truncated archive is an error naming the archive.
	raw, _ := os.ReadFile(tgz)
	cut := filepath.Join(t.TempDir(), "cut.tar.gz")
	os.WriteFile(cut, raw[:len(raw)*2/3], 0o644)
	if _, err := Load(context.Background(), "", "imdb", Options{Path: cut}); err == nil || !strings.Contains(err.Error(), cut) {
		t.Errorf("truncated archive: %v", err)
	}
}

func gz(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

// TestBadInput checks that each kind of broken file gives an error with
// the file name and line, and no panic.
func TestBadInput(t *testing.T) {
	longTSV := "sentence\tlabel\n" + strings.Repeat("a fine sentence that compresses well\t1\n", 4000)
	truncated := gz(longTSV)
	truncated = truncated[:len(truncated)/2]
	cases := []struct {
		name, dataset, file, content string
		line                         int // 0: whole-file error
		msg                          string
	}{
		{"missing column", "sst2", "sst2/train.tsv", "sentence\tlabel\ngood\t1\nno label here\n", 3, "1 columns"},
		{"bad label", "sst2", "sst2/dev.tsv", "sentence\tlabel\ngood\t7\n", 2, `label "7"`},
		{"empty tsv", "sst2", "sst2/dev.tsv", "", 0, "empty file"},
		{"qnli label", "qnli", "qnli/dev.tsv", "index\tquestion\tsentence\tlabel\n0\tq?\ts.\tmaybe\n", 2, "unknown label"},
		{"unterminated quote", "twitter", "twitter/train.csv", "id,keyword,location,text,target\n1,,,ok,1\n2,,,\"never closed,0\n3,,,x,0\n", 4, "extraneous or missing"},
		{"csv short row", "twitter", "twitter/train.csv", "id,keyword,location,text,target\n1,,,ok\n", 2, "wrong number of fields"},
		{"empty csv", "twitter", "twitter/train.csv", "", 0, "empty file"},
		{"empty lexicon", "opinion", "opinion_lexicon/negative-words.txt", ";comment\n\n", 0, "no words"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, map[string]string{c.file: c.content, "opinion_lexicon/positive-words.txt": "good\n"})
			_, err := Load(context.Background(), root, c.dataset, Options{Carve: []Carving{}})
			checkPos(t, err, filepath.Join(root, c.file), c.line, c.msg)
		})
	}
	t.Run("truncated gzip", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "train.tsv.gz")
		os.WriteFile(f, []byte(truncated), 0o644)
		_, err := readTSV(context.Background(), f, []string{"sentence"}, func(string) (int, error) { return 1, nil })
		var se *srcerr.Error
		if !errors.As(err, &se) || se.File != f || se.Line < 2 {
			t.Fatalf("truncated gzip: %v", err)
		}
	})
}

func checkPos(t *testing.T, err error, file string, line int, msg string) {
	t.Helper()
	var se *srcerr.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v has no file position", err)
	}
	if se.File != file || se.Line != line || !strings.Contains(err.Error(), msg) {
		t.Errorf("got %q (file %s line %d), want %s:%d containing %q", err, se.File, se.Line, file, line, msg)
	}
}

func TestCarve(t *testing.T) {
	var ex []Example
	for i := 0; i < 1000; i++ {
		ex = append(ex, Example{ID: string(rune('a'+i%26)) + strings.Repeat("x", i/26), Label: i % 3 / 2}) // labels 0,0,1
	}
	d := &Dataset{Labels: []string{"a", "b"}, Splits: map[string][]Example{"train": append([]Example(nil), ex...)}}
	if err := d.Carve("train", "valid", 0.1, 7); err != nil {
		t.Fatal(err)
	}
	if c := d.LabelCounts("valid"); c[0] != 67 || c[1] != 33 {
		t.Errorf("valid label counts %v, want [67 33] (stratified 10%%)", c)
	}
	// Reversing the input order or adding examples of another label must
	// not change which examples of a label are held out.
	rev := append([]Example(nil), ex...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	rev = append(rev, Example{ID: "extra", Label: 2})
	_, held := HoldOut(rev, 0.1, 7, "valid")
	ids := map[string]bool{}
	for _, e := range d.Splits["valid"] {
		ids[e.ID] = true
	}
	for _, e := range held {
		if e.Label != 2 && !ids[e.ID] {
			t.Fatalf("hold-out changed with input order: %s", e.ID)
		}
	}
	if err := d.Carve("train", "valid", 0.1, 7); err == nil {
		t.Error("carving an existing split succeeded")
	}
	if err := d.Carve("train", "x", 1.5, 7); err == nil {
		t.Error("fraction 1.5 accepted")
	}
}

func ExampleDataset_Summary() {
	d := &Dataset{Labels: []string{"negative", "positive"}, Splits: map[string][]Example{
		"train": {{ID: "1", Text: "good", Label: 1}, {ID: "2", Text: "bad", Label: 0}, {ID: "3", Text: "great", Label: 1}},
		"test":  {{ID: "4", Text: "meh", Label: Unlabelled}},
	}}
	s := d.Summary()
	for i := 0; i < s.Nrow(); i++ {
		fmt.Println(s.Elem(i, 0), s.Elem(i, 1), s.Elem(i, 2), s.Elem(i, 3))
	}
	// Output:
	// train negative 1 3.000000
	// train positive 2 4.500000
	// test - 1 3.000000
}

func TestSample(t *testing.T) {
	var ex []Example
	for i := 0; i < 500; i++ {
		ex = append(ex, Example{ID: fmt.Sprintf("doc%03d", i), Label: i % 2})
	}
	for _, c := range []struct {
		n, want int
	}{{0, 500}, {-3, 500}, {500, 500}, {900, 500}, {1, 1}, {50, 50}, {499, 499}} {
		if got := Sample(ex, c.n, 3, "train"); len(got) != c.want {
			t.Errorf("Sample(%d): %d examples, want %d", c.n, len(got), c.want)
		}
	}
	small, big := Sample(ex, 50, 3, "train"), Sample(ex, 200, 3, "train")
	in := map[string]bool{}
	for _, e := range big {
		in[e.ID] = true
	}
	for i, e := range small {
		if !in[e.ID] {
			t.Errorf("%s of the 50-sample is not in the 200-sample", e.ID)
		}
		if i > 0 && small[i-1].ID >= e.ID {
			t.Errorf("sample out of input order at %d", i)
		}
	}
	// Another salt or seed draws another sample; reordering the input
	// draws the same one.
	rev := slices.Clone(ex)
	slices.Reverse(rev)
	ids := func(x []Example) string {
		var s []string
		for _, e := range x {
			s = append(s, e.ID)
		}
		slices.Sort(s)
		return strings.Join(s, ",")
	}
	if ids(Sample(rev, 50, 3, "train")) != ids(small) {
		t.Error("the sample depends on input order")
	}
	if ids(Sample(ex, 50, 3, "test")) == ids(small) || ids(Sample(ex, 50, 4, "train")) == ids(small) {
		t.Error("salt or seed does not change the sample")
	}
}

// TestByteOrderMark: a UTF-8 byte-order mark at the start of a TSV or CSV
// file (spreadsheets write one) is not part of the first column's name.
func TestByteOrderMark(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"sst2/dev.tsv":      "\uFEFFsentence\tlabel\ngood film\t1\n",
		"twitter/train.csv": "\uFEFF\"id\",keyword,location,text,target\n1,,,fire downtown,1\n2,,,nice day,0\n",
	})
	d, err := Load(context.Background(), root, "sst2", Options{})
	if err != nil || len(d.Splits["dev"]) != 1 || d.Splits["dev"][0].Text != "good film" {
		t.Errorf("sst2 with a BOM: %v", err)
	}
	d, err = Load(context.Background(), root, "twitter", Options{Carve: []Carving{}})
	if err != nil || len(d.Splits["train"]) != 2 || d.Splits["train"][0].ID != "train.csv:1" {
		t.Errorf("twitter with a BOM: %v %+v", err, d)
	}
}

// TestHeaderNames: the three readers of a header row (Kaggle's tweets,
// GLUE's TSV, a user's table) index it alike: names with spaces around
// them (as spreadsheets export " text") and a byte-order mark inside a
// quoted first name are found, and a missing column is named at line 1
// of its file. The tweets reader refused the spaced names before it
// shared the index with the others.
func TestHeaderNames(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"sst2/dev.tsv":      " sentence \tlabel\ngood film\t1\n",
		"twitter/train.csv": "\"\uFEFFid\", keyword ,location, text ,target \n1,,,fire downtown,1\n",
		"table.csv":         " review ,stars\nfine,pos\nbad,neg\n",
		"missing.csv":       "review,stars\nfine,pos\n",
	})
	ctx := context.Background()
	if d, err := Load(ctx, root, "sst2", Options{}); err != nil || len(d.Splits["dev"]) != 1 || d.Splits["dev"][0].Text != "good film" {
		t.Errorf("sst2: %v", err)
	}
	if d, err := Load(ctx, root, "twitter", Options{Carve: []Carving{}}); err != nil || len(d.Splits["train"]) != 1 || d.Splits["train"][0].Text != "fire downtown" {
		t.Errorf("twitter: %v", err)
	}
	if d, err := Load(ctx, "", "table", Options{Path: filepath.Join(root, "table.csv"), Table: TableOptions{Text: "review", Label: "stars"}}); err != nil || len(d.Splits["train"]) != 2 {
		t.Errorf("table: %v", err)
	}
	_, err := Load(ctx, "", "table", Options{Path: filepath.Join(root, "missing.csv"), Table: TableOptions{Text: "text", Label: "stars"}})
	checkPos(t, err, filepath.Join(root, "missing.csv"), 1, `no "text" column (set dataset.text`)
}

// TestFolderNotRegular: a text of a folder dataset that is a FIFO (opened,
// it blocked the load) or a link to a device is refused naming it.
func TestFolderNotRegular(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"train/spam/a.txt": "buy now", "train/ham/b.txt": "hello", "test/spam/c.txt": "cheap", "test/ham/d.txt": "hi"})
	if err := syscall.Mkfifo(filepath.Join(dir, "train", "ham", "fifo.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(context.Background(), "", "folder", Options{Path: dir})
	if err == nil || !strings.Contains(err.Error(), "fifo.txt is a named pipe, not a regular file") {
		t.Errorf("a FIFO among the texts: %v", err)
	}
}
