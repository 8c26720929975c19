package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/internal/realdata"
)

func TestDataGetFromMirrorThenList(t *testing.T) {
	// A mirror whose SST-2 is not GLUE's: refused, nothing copied.
	fake, root := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(fake, "sst2"), 0o755)
	os.WriteFile(filepath.Join(fake, "sst2/train.tsv"), []byte("sentence\tlabel\ngood\t1\nbad\t0\n"), 0o644)
	err := run(context.Background(), []string{"data", "get", "-data", root, "-mirror", fake, "sst2"}, &bytes.Buffer{})
	if err == nil {
		t.Error("a mirror with another train.tsv than GLUE's was copied")
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("the refused copy left %v", ents)
	}
	mirror := datasets.RootFromEnv()
	if mirror == "" {
		t.Skip("SKIP: XP_DATA not set: the copy from a real mirror is not tried")
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"data", "get", "-data", root, "-mirror", mirror, "sst2"}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "3 files verified against the catalog's checksums") {
		t.Errorf("get:\n%s", out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"data", "list", "-data", root}, &out); err != nil {
		t.Fatal(err)
	}
	if !regexpLine(out.String(), "sst2", "extracted layout") || !regexpLine(out.String(), "glove.6B", "absent") {
		t.Errorf("list:\n%s", out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"data", "show", "-data", root, "sst2"}, &out); err != nil {
		t.Fatal(err)
	}
	if !regexpLine(out.String(), "train", "positive", "37569") {
		t.Errorf("show:\n%s", out.String())
	}
	// Unknown names and a missing mirror entry fail with a message.
	for _, args := range [][]string{{"data", "get", "-data", root, "nope"}, {"data", "get", "-data", root, "-mirror", fake, "glove.6B"}, {"data"}, {"data", "show", "-data", root, "qnli"}} {
		if err := run(context.Background(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("xp %v: no error", args)
		}
	}
}

// regexpLine reports whether some line contains all the words in order.
func regexpLine(s string, words ...string) bool {
	for _, l := range strings.Split(s, "\n") {
		rest, ok := l, true
		for _, w := range words {
			i := strings.Index(rest, w)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(w):]
		}
		if ok {
			return true
		}
	}
	return false
}

// TestDataShowSeed: xp data show carves with the configs' default split
// seed (it used 0, so it showed other splits than a config reads).
func TestDataShowSeed(t *testing.T) {
	root := realdata.Root(t)
	show := func(args ...string) string {
		var out bytes.Buffer
		if err := run(context.Background(), append([]string{"data", "show", "twitter"}, args...), &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	def := show()
	if def != show("-seed", fmt.Sprint(experiments.DefaultSplitSeed)) {
		t.Error("xp data show's default seed is not the configs'")
	}
	if def == show("-seed", "0") {
		t.Fatal("seeds 0 and 1 show the same splits: the test says nothing")
	}
	d, err := datasets.Load(context.Background(), root, "twitter", datasets.Options{Seed: experiments.DefaultSplitSeed})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	writeRecords(&want, d.Summary().Records())
	if !strings.Contains(def, want.String()) {
		t.Errorf("xp data show:\n%s\nwant the splits of seed %d:\n%s", def, experiments.DefaultSplitSeed, want.String())
	}
}

// TestDataShowConfig: xp data show CONFIG loads the dataset the config
// names as a run would and prints each split's examples, tokens, share
// without a vector and label counts ("data show" took only a dataset
// name, and a user could not see their own file's splits).
func TestDataShowConfig(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 6, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"data", "show", cfg}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| split | examples | tokens | without a vector | labels |", "| test | 12 |", "neg 6 (50.0%), pos 6 (50.0%)", "2 labels: neg, pos"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}

// TestHostileLabelShown: a label holding terminal escapes (a window-title
// sequence, a screen clear) and a right-to-left override reaches neither
// standard output nor standard error raw, through the command line as a
// user runs it: both go through show.Writer, which escapes them.
func TestHostileLabelShown(t *testing.T) {
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 20, Test: 6, Epochs: 1, Epsilon: []float64{5}, Seeds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	bad := "pos\x1b]0;pwned\x07\x1b[2J\u202eevil"
	var csv strings.Builder
	csv.WriteString("text,label\n")
	for i := range 20 {
		fmt.Fprintf(&csv, "good film %d,%s\nbad film %d,neg\n", i, bad, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`(?m)^dataset:\n(  .*\n)*`).ReplaceAllString(string(b), "dataset:\n  name: table\n  path: ./mine.csv\n  test_fraction: 0.25\n")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// A path holding them, in an error message (no table escapes it).
	missing := "--set=dataset.path=./gone\x1b]0;pwned\x07\u202e.csv"
	for _, args := range [][]string{{"data", "show", cfg}, {"run", "--dry-run", cfg}, {"run", "--dry-run", missing, cfg}} {
		var stdout, stderr bytes.Buffer
		cmd := xpCommand(args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		all := stdout.String() + stderr.String()
		if strings.ContainsAny(all, "\x1b\x07\u202e") {
			t.Errorf("xp %s printed a raw escape or override:\n%q", strings.Join(args, " "), all)
		}
		if args[1] == "show" && !strings.Contains(all, `pos\x1b]0;pwned\x07\x1b[2J\u202eevil`) {
			t.Errorf("xp data show does not show the label escaped:\n%s", all)
		}
		if args[2] == missing && !strings.Contains(all, `gone\x1b]0;pwned\x07\u202e.csv`) {
			t.Errorf("the error does not show the path escaped:\n%s", all)
		}
	}
}
