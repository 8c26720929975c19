package datasets

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/internal/realdata"
)

// dataRoot returns the real data root (XP_DATA) or skips the test,
// saying why (realdata.Root).
func dataRoot(t testing.TB) string { return realdata.Root(t) }

func loadReal(t *testing.T, name string, opt Options) *Dataset {
	t.Helper()
	root := dataRoot(t)
	if _, err := Locate(root, name, opt); err != nil {
		t.Skipf("SKIP: %v", err)
	}
	d, err := Load(context.Background(), root, name, opt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRealCounts(t *testing.T) {
	noCarve := Options{Carve: []Carving{}}
	cases := []struct {
		name   string
		opt    Options
		split  string
		counts []int // per label
		total  int   // including unlabelled
	}{
		{"sst2", noCarve, "train", []int{29780, 37569}, 67349},
		{"sst2", noCarve, "dev", []int{428, 444}, 872},
		{"sst2", noCarve, "test", []int{0, 0}, 1821},
		{"qnli", noCarve, "dev", nil, 5463},
		{"qnli", noCarve, "test", []int{0, 0}, 5463},
		{"twitter", noCarve, "train", []int{4342, 3271}, 7613},
		{"twitter", noCarve, "unlabelled", []int{0, 0}, 3263},
		{"opinion", noCarve, "all", []int{4783, 2006}, 6789},
		{"imdb", noCarve, "train", []int{12500, 12500}, 25000},
		{"imdb", noCarve, "test", []int{12500, 12500}, 25000},
	}
	cache := map[string]*Dataset{}
	for _, c := range cases {
		t.Run(c.name+"/"+c.split, func(t *testing.T) {
			d := cache[c.name]
			if d == nil {
				d = loadReal(t, c.name, c.opt)
				cache[c.name] = d
			}
			ex, err := d.Split(c.split)
			if err != nil {
				t.Fatal(err)
			}
			if len(ex) != c.total {
				t.Errorf("%d examples, want %d", len(ex), c.total)
			}
			if c.counts != nil && !slices.Equal(d.LabelCounts(c.split), c.counts) {
				t.Errorf("label counts %v (%v), want %v", d.LabelCounts(c.split), d.Labels, c.counts)
			}
		})
	}
}

func TestRealLexiconLatin1(t *testing.T) {
	d := loadReal(t, "opinion", Options{})
	for _, e := range d.Splits["all"] {
		if e.Text == "naïve" {
			if d.Labels[e.Label] != "negative" {
				t.Errorf("naïve labelled %s", d.Labels[e.Label])
			}
			return
		}
	}
	t.Error(`"naïve" not among the words: Latin-1 line not decoded`)
}

func TestRealIMDb(t *testing.T) {
	d := loadReal(t, "imdb", Options{Carve: []Carving{}})
	for _, e := range d.Splits["train"][:200] {
		if e.Rating < 1 || e.Rating > 10 || (e.Label == 1) != (e.Rating >= 7) {
			t.Fatalf("%s: rating %d label %d", e.ID, e.Rating, e.Label)
		}
		if strings.Contains(e.Text, "<br />") || strings.Contains(e.Text, "<br/>") {
			t.Fatalf("%s: HTML break left in text", e.ID)
		}
	}
}

func TestRealTwitterCarve(t *testing.T) {
	a := loadReal(t, "twitter", Options{Seed: 1})
	b := loadReal(t, "twitter", Options{Seed: 1})
	c := loadReal(t, "twitter", Options{Seed: 2})
	if n := len(a.Splits["test"]); n != 761 && n != 762 {
		t.Errorf("9:1 split gave %d test tweets of 7,613", n)
	}
	if len(a.Splits["train"])+len(a.Splits["test"]) != 7613 {
		t.Errorf("train %d + test %d != 7613", len(a.Splits["train"]), len(a.Splits["test"]))
	}
	if !slices.Equal(a.Splits["test"], b.Splits["test"]) {
		t.Error("same seed, different test split")
	}
	if slices.Equal(a.Splits["test"], c.Splits["test"]) {
		t.Error("different seeds, same test split")
	}
}

func TestRealEnron(t *testing.T) {
	d := loadReal(t, "enron", Options{Seed: 1})
	if len(d.Labels) != 10 {
		t.Fatalf("%d authors %v, want 10", len(d.Labels), d.Labels)
	}
	total := len(d.Splits["train"]) + len(d.Splits["test"])
	// 3,915 files; bodies dedupe to at most the PROVENANCE's unique counts
	// (3,782), minus assistants' mail (43) and emptied bodies.
	if total < 3000 || total > 3782-43 {
		t.Errorf("%d messages after filtering and deduplication", total)
	}
	for i, n := range d.LabelCounts("test") {
		all := d.LabelCounts("train")[i] + n
		if want := int(float64(all)*0.1 + 0.5); n != want {
			t.Errorf("%s: %d test of %d, want %d", d.Labels[i], n, all, want)
		}
	}
	t.Logf("enron: %d messages, per author (train+test): %v %v", total, d.Labels, d.LabelCounts("train"))
}
