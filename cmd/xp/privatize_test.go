package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrivatizeCommand(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "sst2"), 0o755)
	os.WriteFile(filepath.Join(root, "sst2/dev.tsv"), []byte("sentence\tlabel\ngood film , zzz\t1\nbad film\t0\n"), 0o644)
	emb := filepath.Join(root, "vec.txt")
	os.WriteFile(emb, []byte("good 1 0\nbad -1 0\nfilm 0 1\n, 0 -1\n"), 0o644)
	for _, c := range []struct{ mech, p string }{{"laplace", ""}, {"vickrey", "t=0.5"}, {"custext", "k=2"}, {"santext+", "p=0.3"}} {
		args := []string{"privatize", "-data", root, "-dataset", "sst2", "-split", "dev", "-embedding", emb, "-cache", "", "-mech", c.mech, "-eps", "5"}
		if c.p != "" {
			args = append(args, "-p", c.p)
		}
		var out bytes.Buffer
		if err := run(context.Background(), args, &out); err != nil {
			t.Fatalf("%s: %v", c.mech, err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 3 || lines[0] != "id\tlabel\ttext" || !strings.HasPrefix(lines[1], "dev.tsv:2\tpositive\t") ||
			len(strings.Fields(strings.Split(lines[1], "\t")[2])) != 4 || !strings.HasSuffix(lines[1], " zzz") {
			t.Errorf("%s output:\n%s", c.mech, out.String())
		}
	}
	for _, args := range [][]string{
		{"privatize", "-data", root, "-embedding", emb, "-cache", "", "-mech", "nope"},
		{"privatize", "-data", root, "-embedding", emb, "-cache", "", "-eps", "0"},
		{"privatize", "-data", root, "-embedding", emb, "-cache", "", "-p", "t"},
	} {
		if err := run(context.Background(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("xp %v: no error", args)
		}
	}
}
