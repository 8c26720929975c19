package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
)

func fixtureConfig(t *testing.T, o fixture.Options, sets ...string) (*experiments.Config, string) {
	t.Helper()
	dir := t.TempDir()
	path, err := fixture.Write(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	c, err := experiments.Load(path, experiments.Options{Set: sets})
	if err != nil {
		t.Fatal(err)
	}
	return c, dir
}

// TestRunDoesNotMutateConfig: Run resolves the device and threads in its
// own copy.
func TestRunDoesNotMutateConfig(t *testing.T) {
	c, _ := fixtureConfig(t, fixture.Options{Train: 5, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}, "device=auto", "apply=[none]", "mechanisms=[]")
	before := c.Clone()
	if _, err := Run(context.Background(), c, Options{}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, before) || c.Device != "auto" {
		t.Errorf("Run changed its config: device %q", c.Device)
	}
}

// TestCorpusCacheVerified: a damaged or truncated corpus cache entry is a
// miss — reported, privatized again to the same tokens — never trusted.
func TestCorpusCacheVerified(t *testing.T) {
	c, _ := fixtureConfig(t, fixture.Options{Train: 30, Test: 10, Epochs: 1, Epsilon: []float64{3}, Seeds: []int{1}}, "apply=[test]")
	var log bytes.Buffer
	s, err := Open(context.Background(), c, SessionOptions{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cell := c.Cells()[0]
	first, err := s.Split(context.Background(), cell, "test", nil)
	if err != nil || first.Report == nil || first.Seconds == 0 {
		t.Fatalf("first privatization: %v %+v", err, first.Report)
	}
	path := filepath.Join(c.Cache, "corpora", c.CorpusKey(cell, "test", s.Inputs())+".gob.gz")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Split(context.Background(), cell, "test", nil); again.Seconds != 0 || !reflect.DeepEqual(again.Docs, first.Docs) {
		t.Fatal("an intact entry was not served from the cache")
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	for name, bad := range map[string][]byte{"flipped byte": flipped, "truncated": good[:len(good)-9], "empty": nil} {
		log.Reset()
		if err := os.WriteFile(path, bad, 0o666); err != nil {
			t.Fatal(err)
		}
		p, err := s.Split(context.Background(), cell, "test", nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Seconds == 0 || !reflect.DeepEqual(p.Docs, first.Docs) || *p.Report != *first.Report {
			t.Errorf("%s: the entry was trusted, or privatizing again gave other tokens", name)
		}
		if !strings.Contains(log.String(), "corpus cache "+path) || !strings.Contains(log.String(), "privatizing test again") {
			t.Errorf("%s: not reported: %q", name, log.String())
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, good) {
			t.Errorf("%s: the rewritten entry differs from the first", name)
		}
	}
	// An entry replaced by a FIFO is neither opened (opening one blocks
	// until a writer comes) nor replaced (xp replaces only regular
	// files): the split fails in one line naming it.
	log.Reset()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Split(context.Background(), cell, "test", nil); err == nil || !strings.Contains(err.Error(), path+": it is a named pipe, not a regular file") {
		t.Errorf("a FIFO in the cache: %v", err)
	}
	if !strings.Contains(log.String(), "not a regular file") {
		t.Errorf("a FIFO in the cache: its reading not reported: %q", log.String())
	}
	if info, err := os.Lstat(path); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("a FIFO in the cache was replaced: %v", err)
	}
}

// TestModelVocabulary: a model's vocabulary comes from its training
// input (every training word, validation words with a vector); with
// frozen vectors every evaluated token that has a vector reaches the
// model with it (an extension id after the vocabulary when outside it);
// only words with neither a vector nor a training occurrence are <unk>.
func TestModelVocabulary(t *testing.T) {
	emb := &embedding.Embedding{Dim: 1, Words: []string{"good", "bad", "great", "awful"}, Data: []float32{1, 2, 3, 4}}
	emb = emb.Top(4) // builds the index
	splits := map[string]Split{
		"train": {Docs: [][]string{{"good", "bad", "trainonly"}}},
		"valid": {Docs: [][]string{{"good", "great", "validonly"}}},
		"test":  {Docs: [][]string{{"awful", "great", "unseen", "trainonly", "awful"}}},
	}
	v := modelVocab(splits, emb)
	for _, w := range []string{"good", "bad", "trainonly", "great"} {
		if _, ok := v.ID(w); !ok {
			t.Errorf("%q is not in the model's vocabulary", w)
		}
	}
	for _, w := range []string{"awful", "unseen", "validonly"} {
		if _, ok := v.ID(w); ok {
			t.Errorf("%q got an id: only training words and validation words with a vector do", w)
		}
	}
	ext := newExtension(v.Len())
	d, cov := modelData(splits["test"], v, ext, emb)
	awful := int64(v.Len())
	if cov != (results.Coverage{Tokens: 5, Vectors: 3, Unknown: 1}) || !slices.Equal(d.Seqs[0], []int64{awful, d.Seqs[0][1], unkID, d.Seqs[0][3], awful}) {
		t.Errorf("test coverage %+v, ids %v (vocabulary %d)", cov, d.Seqs[0], v.Len())
	}
	if rows := ext.rows(emb); !slices.Equal(rows, []float32{4}) {
		t.Errorf("extension rows %v, want awful's vector [4]", rows)
	}
}

// TestUnwritableFolders: an output or cache folder that cannot be created
// is an error naming the path and the config key, before any work.
func TestUnwritableFolders(t *testing.T) {
	for _, key := range []string{"output", "cache"} {
		c, dir := fixtureConfig(t, fixture.Options{Train: 5, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}})
		blocker := filepath.Join(dir, "blocker")
		os.WriteFile(blocker, []byte("a file where the folder should be"), 0o666)
		c2, err := experiments.Load(c.File(), experiments.Options{Set: []string{key + "=" + filepath.Join(blocker, "sub")}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(context.Background(), c2, Options{})
		want := fmt.Sprintf("--set %s=%s: %s %s is not a writable folder", key, filepath.Join(blocker, "sub"), key, filepath.Join(blocker, "sub"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v\nwant %q", key, err, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "cache", "embeddings")); err == nil {
			t.Errorf("%s: work started before the check", key)
		}
	}
}

// TestStaleTemporariesRemoved: temporaries of a process that is gone (a
// run killed mid-write) are removed when the next run starts; a live
// process's are left alone.
func TestStaleTemporariesRemoved(t *testing.T) {
	c, _ := fixtureConfig(t, fixture.Options{Train: 5, Test: 5, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}}, "apply=[none]", "mechanisms=[]")
	dead := exec.Command("true")
	dead.Run()
	live := exec.Command("sleep", "30")
	live.Start()
	defer live.Process.Kill()
	host, _ := os.Hostname()
	host = strings.ReplaceAll(host, ".", "_")
	var stale, kept []string
	// The run killed mid-write had marked its folder.
	if err := os.MkdirAll(c.Output, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteMarker(c.Output); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(c.Cache, "corpora"), filepath.Join(c.Cache, "tmp"), filepath.Join(c.Output, "cells"), c.Output, filepath.Join(c.Output, "tables")} {
		os.MkdirAll(dir, 0o777)
		s := filepath.Join(dir, fmt.Sprintf(".x.%s.%d.aa.tmp", host, dead.Process.Pid))
		k := filepath.Join(dir, fmt.Sprintf(".x.%s.%d.bb.tmp", host, live.Process.Pid))
		os.WriteFile(s, nil, 0o666)
		os.WriteFile(k, nil, 0o666)
		stale, kept = append(stale, s), append(kept, k)
	}
	if _, err := Run(context.Background(), c, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("stale %s left", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("live process's %s removed", p)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(c.Cache, "tmp")); len(ents) != 1 {
		t.Errorf("checkpoint folders left in the cache: %v", ents)
	}
}

// TestErrorOneLine: a cell's record keeps its error on one line; a longer
// one (a panic's stack trace) goes whole to traces/<key>.txt, which the
// line names (stored errors were multi-kilobyte traces that xp status and
// the page printed whole).
func TestErrorOneLine(t *testing.T) {
	out := t.TempDir()
	if got := oneLine(out, "k1", errors.New("no vector for happy")); got != "no vector for happy" {
		t.Errorf("a one-line error became %q", got)
	}
	trace := "libtorch call panicked: boom\ngoroutine 1 [running]:\n" + strings.Repeat("main.f()\n\t/x.go:1\n", 200)
	got := oneLine(out, "k2", errors.New(trace))
	if want := "libtorch call panicked: boom (the whole message: traces/k2.txt)"; got != want {
		t.Errorf("a trace became %q, want %q", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(out, "traces", "k2.txt")); err != nil || string(b) != trace+"\n" {
		t.Errorf("the trace file: %v, %d bytes", err, len(b))
	}
	torchErr := &ts.XpError{Msg: "shapes cannot be multiplied\nException raised from mm at x.cpp:1", Stack: "goroutine 7 [running]:\nmain.f()"}
	got = oneLine(out, "k4", fmt.Errorf("train: %w", torchErr))
	if want := "train: shapes cannot be multiplied (the whole message: traces/k4.txt)"; got != want {
		t.Errorf("a libtorch error became %q, want %q", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "traces", "k4.txt")); !strings.Contains(string(b), "Exception raised from mm") || !strings.Contains(string(b), "goroutine 7") {
		t.Errorf("the libtorch error's trace file: %q", b)
	}
	long := strings.Repeat("x", 2000)
	if got := oneLine(out, "k3", errors.New(long)); len(got) > maxErrorLine+100 || !strings.Contains(got, "traces/k3.txt") {
		t.Errorf("a 2,000-byte line became %d bytes: %.80q", len(got), got)
	}
}
