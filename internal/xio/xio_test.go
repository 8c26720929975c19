package xio

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xp-nlp/xp/internal/filelimit"
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

// TestCleanTemps: only temporaries of processes that are gone are
// removed; another live process's, other files and another machine's
// recent ones stay.
func TestCleanTemps(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer live.Process.Kill()
	files := map[string]bool{ // name → removed
		fmt.Sprintf(".rec.json.%s.%d.aa.tmp", host, dead.Process.Pid): true,
		fmt.Sprintf(".rec.json.%s.%d.bb.tmp", host, live.Process.Pid): false,
		fmt.Sprintf(".rec.json.%s.%d.cc.tmp", host, os.Getpid()):      false,
		".rec.json.otherhost.1.dd.tmp":                                false,
		".rec.json.oldhost.1.ee.tmp":                                  true,
		"notes.txt":                                                   false,
		"rec.json":                                                    false,
		".hidden":                                                     false,
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * StaleAfter)
	os.Chtimes(filepath.Join(dir, ".rec.json.oldhost.1.ee.tmp"), old, old)
	// A folder (a cell's checkpoints) of a dead process goes too.
	deadDir := filepath.Join(dir, fmt.Sprintf(".cell.%s.%d.ff.tmp", host, dead.Process.Pid))
	os.MkdirAll(filepath.Join(deadDir, "x"), 0o777)
	files[filepath.Base(deadDir)] = true
	removed, err := CleanTemps(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, gone := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if exists := err == nil; exists == gone {
			t.Errorf("%s: exists=%v, want removed=%v", name, exists, gone)
		}
	}
	if len(removed) != 3 {
		t.Errorf("removed %v", removed)
	}
}

// TestModesHonourUmask: xp's files are 0666 less the umask (group-shared
// folders on clusters need group write), not 0600.
func TestModesHonourUmask(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := WriteFileAtomic(p, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	d, err := MkdirTemp(filepath.Join(dir, "sub"), "cell")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{p: 0o664, d: 0o775 | os.ModeDir} {
		if st, err := os.Stat(path); err != nil || st.Mode() != want {
			t.Errorf("%s: mode %v, want %v (%v)", path, st.Mode(), want, err)
		}
	}
}

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	if err := CheckWritable("output", filepath.Join(dir, "a", "b")); err != nil {
		t.Errorf("a creatable folder: %v", err)
	}
	// A file where the folder should be (tests run as root: permissions
	// would not stop them).
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o666)
	err := CheckWritable("cache", filepath.Join(blocker, "sub"))
	if err == nil || !strings.Contains(err.Error(), "cache "+filepath.Join(blocker, "sub")+" is not a writable folder") {
		t.Errorf("got %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("the check left files: %v", ents)
	}
}

func TestLinesSkipBOM(t *testing.T) {
	l := NewLines(strings.NewReader("\uFEFFsentence\tlabel\nok\t1\n"), "x.tsv")
	if !l.Next() || l.Text() != "sentence\tlabel" {
		t.Errorf("first line %q", l.Text())
	}
	r := SkipBOM(strings.NewReader("plain"))
	b, _ := io.ReadAll(r)
	if string(b) != "plain" {
		t.Errorf("%q", b)
	}
}

// TestProcessAge: on Linux this process's age grows with
// time, and is not absurd (a test binary is seconds to minutes old).
func TestProcessAge(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	a := ProcessAge()
	time.Sleep(50 * time.Millisecond)
	b := ProcessAge()
	if a < 0 || b < a+30*time.Millisecond || b > time.Hour {
		t.Errorf("process age %v, then %v after 50 ms", a, b)
	}
}

// TestPathWithHash: '#' names a zip's member only after ".zip"; a file
// under a folder named "run#2" opens as itself (it was cut at the '#'
// and reported missing).
func TestPathWithHash(t *testing.T) {
	for _, c := range []struct{ path, file, member string }{
		{"a.zip#b.txt", "a.zip", "b.txt"},
		{"/d/run#2/train.csv", "/d/run#2/train.csv", ""},
		{"/d/run#2/v.zip#m#1.vec", "/d/run#2/v.zip", "m#1.vec"},
		{"a.zip", "a.zip", ""},
	} {
		if f, m := SplitMember(c.path); f != c.file || m != c.member {
			t.Errorf("SplitMember(%q) = %q, %q; want %q, %q", c.path, f, m, c.file, c.member)
		}
	}
	dir := filepath.Join(t.TempDir(), "run#2")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "x.txt")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, _, err := Open(p)
	if err != nil {
		t.Fatalf("a file under a folder with '#': %v", err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "hello" {
		t.Errorf("read %q", b)
	}
}

// TestReplaceKeepsTarget: a write that fails midway leaves what was at
// the path as it was and no temporary behind.
func TestReplaceKeepsTarget(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.bin")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := fmt.Errorf("boom")
	err := replaceWith(p, func(f *os.File) error {
		f.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), p) {
		t.Errorf("failed write: %v, want boom naming %s", err, p)
	}
	assertOnly(t, dir, "state.bin", "old")
}

// TestWriteOnFullDisk: where the disk refuses the bytes (here a file-size
// limit in a child process, which fails a write as a full disk does), the
// error is one line naming the target, the earlier file stays whole and
// the temporary is gone.
func TestWriteOnFullDisk(t *testing.T) {
	if !filelimit.Child(t, 1<<16) {
		return
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "state.bin")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFileAtomic(p, make([]byte, 1<<20))
	if err == nil || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a write past the disk's room: %v, want one line naming %s", err, p)
	}
	t.Log(err)
	assertOnly(t, dir, "state.bin", "old")
}

// TestReplaceRefusesSpecialFiles: a target that is a device, a FIFO or a
// folder is refused before anything is created (renaming onto /dev/full
// replaced the device node, as root); a symbolic link is replaced as a
// link, its target untouched. The special file is a FIFO of the test's
// own, so a regression damages nothing of the machine's.
func TestReplaceRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	for _, p := range []string{fifo, sub} {
		var nr *NotRegular
		if err := WriteFileAtomic(p, []byte("x")); !errors.As(err, &nr) {
			t.Errorf("WriteFileAtomic(%s): %v, want a refusal", p, err)
		}
	}
	if info, err := os.Lstat(fifo); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is no longer one: %v %v", info, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("folder holds %d entries after the refusals, want 2 (no temporaries)", len(ents))
	}
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("kept"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if err := WriteFileAtomic(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "kept" {
		t.Errorf("the link's target was written: %q", b)
	}
	if info, _ := os.Lstat(link); !info.Mode().IsRegular() {
		t.Errorf("the link was not replaced by a file: %v", info.Mode())
	}
}

// assertOnly fails unless dir holds exactly one entry, name, with these
// bytes.
func assertOnly(t *testing.T, dir, name, want string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != name {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("folder holds %v, want only %s", names, name)
	}
	if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
		t.Errorf("%s holds %q (%v), want %q", name, b, err, want)
	}
}

// gz compresses b.
func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadGzipMax(t *testing.T) {
	dir := t.TempDir()
	put := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	text := bytes.Repeat([]byte("a privatized corpus of words "), 1000)
	whole := gz(t, text)
	if b, err := ReadGzipMax(put("ok.gz", whole), MaxCache); err != nil || !bytes.Equal(b, text) {
		t.Errorf("a whole file: %d bytes, %v", len(b), err)
	}
	// 200 MiB of zeros compress to about 200 KiB: past 64 × that + 64 MiB.
	bomb := put("bomb.gz", gz(t, make([]byte, 200<<20)))
	if _, err := ReadGzipMax(bomb, MaxCache); err == nil || !strings.Contains(err.Error(), "inflates to more than") {
		t.Errorf("a gzip bomb: %v, want a refusal", err)
	}
	if _, err := ReadGzipMax(put("small.gz", whole), 100); err == nil || !strings.Contains(err.Error(), "more than 100 bytes") {
		t.Errorf("past max: %v", err)
	}
	if _, err := ReadGzipMax(put("cut.gz", whole[:len(whole)-6]), MaxCache); err == nil {
		t.Error("a truncated file read without error")
	}
	if _, err := ReadGzipMax(put("plain.gz", text), MaxCache); err == nil || !strings.Contains(err.Error(), "not a gzip file") {
		t.Errorf("not gzip: %v", err)
	}
	if _, err := ReadGzipMax(filepath.Join(dir, "none.gz"), MaxCache); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

// TestReadersRefuseOddFiles: a cache or record that was replaced by a
// link to a device or by a FIFO is refused in one line, not read for
// ever (the device is only linked to and opened for reading).
func TestReadersRefuseOddFiles(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.gz")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.gz")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{zero, fifo} {
		var odd *NotRegularInput
		if _, err := ReadGzipMax(p, MaxCache); !errors.As(err, &odd) {
			t.Errorf("ReadGzipMax(%s): %v, want *NotRegularInput", p, err)
		}
		if _, err := ReadFileMax(p, MaxCache); !errors.As(err, &odd) {
			t.Errorf("ReadFileMax(%s): %v, want *NotRegularInput", p, err)
		}
	}
}
