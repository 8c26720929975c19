package datasets

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLabelsChecked: a user's table or folder whose labels differ only
// by case or spacing, or whose test split lacks a label its training
// split carries (or the reverse), is refused naming the examples that
// carry it; pinning the label set (Options.Labels) accepts both on
// purpose, and refuses a label outside it.
func TestLabelsChecked(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
		return p
	}
	train := write("train.csv", "text,label\ngood,pos\nbad,neg\nnice,Pos\nfine,pos\nugly,neg\n")
	test := write("test.csv", "text,label\ngreat,pos\nawful,neg\n")
	spaced := write("spaced.csv", "text,label\ngood,very pos\nbad,neg\nnice,very  pos\n")
	noNeg := write("nonneg.csv", "text,label\ngreat,pos\ngood,pos\n")
	three := write("three.csv", "text,label\ngood,pos\nbad,neg\nmeh,mixed\n")
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		opt    Options
		want   string // "" loads
		labels string
	}{
		{"a case typo", Options{Path: train, Table: TableOptions{TestPath: test}},
			`labels "Pos" (1 example: train.csv:4) and "pos" (3 examples: train.csv:2, train.csv:5, test.csv:2) differ only by case or spacing`, ""},
		{"a spacing typo", Options{Path: spaced, Table: TableOptions{TestPath: test}},
			`labels "very  pos" (1 example: spaced.csv:4) and "very pos" (1 example: spaced.csv:2) differ only by case or spacing`, ""},
		{"a label the test split lacks", Options{Path: three, Table: TableOptions{TestPath: test}},
			`label "mixed" is carried by 1 example: three.csv:4, and by no example of split test`, ""},
		{"a label the training split lacks", Options{Path: noNeg, Table: TableOptions{TestPath: test}},
			`label "neg" is carried by 1 example: test.csv:3, and by no example of split train`, ""},
		{"the typo pinned on purpose", Options{Path: train, Table: TableOptions{TestPath: test}, Labels: []string{"neg", "pos", "Pos"}}, "", "neg,pos,Pos"},
		{"an absent label pinned", Options{Path: three, Table: TableOptions{TestPath: test}, Labels: []string{"pos", "neg", "mixed"}}, "", "pos,neg,mixed"},
		{"a label outside the pinned set", Options{Path: train, Table: TableOptions{TestPath: test}, Labels: []string{"neg", "pos"}},
			`label "Pos" (1 example: train.csv:4) is not one of dataset.labels [neg, pos]`, ""},
		{"no test file: one split, nothing to lack", Options{Path: three}, "", "mixed,neg,pos"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := Load(ctx, "", "table", c.opt)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("got %v, want an error with %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(d.Labels, ","); got != c.labels {
				t.Errorf("labels %s, want %s", got, c.labels)
			}
		})
	}
	// The same for a folder of class folders.
	root := filepath.Join(dir, "folder")
	write("folder/train/pos/a.txt", "good")
	write("folder/train/neg/b.txt", "bad")
	write("folder/train/Pos/c.txt", "nice")
	write("folder/test/pos/d.txt", "great")
	write("folder/test/neg/e.txt", "awful")
	if _, err := Load(ctx, "", "folder", Options{Path: root}); err == nil || !strings.Contains(err.Error(), `labels "Pos" (1 example: train/Pos/c.txt) and "pos"`) {
		t.Errorf("folder with a case typo: %v", err)
	}
	d, err := Load(ctx, "", "folder", Options{Path: root, Labels: []string{"neg", "pos", "Pos"}})
	if err != nil {
		t.Fatalf("folder, pinned: %v", err)
	}
	for _, x := range d.Splits["train"] {
		if want := map[string]int{"train/neg/b.txt": 0, "train/pos/a.txt": 1, "train/Pos/c.txt": 2}[x.ID]; x.Label != want {
			t.Errorf("folder, pinned: %s has label %d, want %d (the pinned order)", x.ID, x.Label, want)
		}
	}
}
