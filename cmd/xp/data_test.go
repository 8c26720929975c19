package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDataGetFromMirrorThenList(t *testing.T) {
	mirror, root := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(mirror, "sst2"), 0o755)
	os.WriteFile(filepath.Join(mirror, "sst2/train.tsv"), []byte("sentence\tlabel\ngood\t1\nbad\t0\n"), 0o644)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"data", "get", "-data", root, "-mirror", mirror, "sst2"}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
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
	if !regexpLine(out.String(), "train", "positive", "1") {
		t.Errorf("show:\n%s", out.String())
	}
	// Unknown names and a missing mirror entry fail with a message.
	for _, args := range [][]string{{"data", "get", "-data", root, "nope"}, {"data", "get", "-data", root, "-mirror", mirror, "glove.6B"}, {"data"}, {"data", "show", "-data", root, "qnli"}} {
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
