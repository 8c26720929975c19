package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/gob"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/runner"
)

// TestPrivatizeMatchesRun: `xp privatize` writes byte for byte the tokens
// the runner cached for the cell — computed afresh (another cache folder),
// through the same path — for each split.
func TestPrivatizeMatchesRun(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 30, Test: 10, Epochs: 1, Epsilon: []float64{2, 8}, Seeds: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"run", "-q", cfg}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	c, err := experiments.Load(cfg, experiments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := runner.Open(context.Background(), c, runner.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, split := range []string{"train", "valid", "test"} {
		sel := experiments.Selector{Setting: "laplace", Epsilon: 8, Seed: 2, Role: "train"}
		if split == "test" {
			sel.Role = "test"
		}
		cell, err := c.Select(sel)
		if err != nil {
			t.Fatal(err)
		}
		cached := readCachedCorpus(t, filepath.Join(dir, "cache", "corpora", c.CorpusKey(cell, split, s.Inputs())+".gob.gz"))
		var out bytes.Buffer
		args := []string{"privatize", "--set", "cache=" + filepath.Join(dir, "fresh-cache"), "--eps", "8", "--seed", "2", "--split", split, cfg}
		if err := run(context.Background(), args, &out); err != nil {
			t.Fatalf("%s: %v", split, err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if lines[0] != "id\tlabel\toriginal\tprivatized" || len(lines)-1 != len(cached) || len(cached) == 0 {
			t.Fatalf("%s: %d rows written, %d cached:\n%s", split, len(lines)-1, len(cached), out.String())
		}
		changed := 0
		for i, line := range lines[1:] {
			f := strings.Split(line, "\t")
			if want := strings.Join(cached[i], " "); f[3] != want {
				t.Errorf("%s row %d: %q, the runner trained on %q", split, i, f[3], want)
			}
			if f[2] != f[3] {
				changed++
			}
			if len(strings.Fields(f[2])) != len(strings.Fields(f[3])) {
				t.Errorf("%s row %d: original %q and privatized %q differ in length", split, i, f[2], f[3])
			}
		}
		if changed == 0 {
			t.Errorf("%s: the original column equals the privatized one in every row (ε=8)", split)
		}
		// --diff marks the changed words, one line per example.
		out.Reset()
		if err := run(context.Background(), append(args[:len(args)-1], "--diff", cfg), &out); err != nil {
			t.Fatal(err)
		}
		if d := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); len(d) != len(cached) || !strings.Contains(out.String(), "→") {
			t.Errorf("%s --diff: %d lines for %d examples:\n%.400s", split, len(d), len(cached), out.String())
		}
	}
	// Selection errors say what there is.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"privatize", "--eps", "3", cfg}, "no cell matches (the cells that privatize test have settings \"laplace\"; ε 2, 8; seeds 1, 2)"},
		{[]string{"privatize", "--eps", "2", cfg}, "several cells match"},
		{[]string{"privatize", "--split", "dev", cfg}, `--split "dev": want train, valid or test`},
	} {
		err := run(context.Background(), c.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v\nwant %q", c.args, err, c.want)
		}
	}
}

// readCachedCorpus decodes a runner corpus cache entry's tokens.
func readCachedCorpus(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var cf struct{ Docs [][]string }
	if err := gob.NewDecoder(zr).Decode(&cf); err != nil {
		t.Fatal(err)
	}
	return cf.Docs
}
