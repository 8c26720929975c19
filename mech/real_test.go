package mech

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/datasets/embedding"
)

// TestRealCusTextTable4 checks the shape of CusText's Table 4 on SST-2:
// the share of input tokens whose output set no other input word shares
// ("not of type N–M") is near 100% for the aggressive mapping and near 0
// for the balanced one (the paper: 96–99.8% and ≤ 0.12% with
// counter-fitted vectors; here the shared fastText vectors).
func TestRealCusTextTable4(t *testing.T) {
	root := datasets.RootFromEnv()
	if root == "" {
		t.Skip("SKIP: XP_DATA is not set; real-data test not run")
	}
	d, err := datasets.Load(context.Background(), root, "sst2", datasets.Options{})
	if err != nil {
		t.Skipf("SKIP: %v", err)
	}
	e, err := embedding.Load(context.Background(), filepath.Join(root, "embeddings/fasttext-sg-xpcorpus-300d.vec.gz"),
		embedding.Options{CacheDir: filepath.Join(t.TempDir(), "cache")})
	if err != nil {
		t.Skipf("SKIP: %v", err)
	}
	space, err := NewSpace(e, gotch.CPU, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer space.Close()
	tok := datasets.DefaultTokenizer()
	counts := map[string]int64{}
	for _, x := range d.Splits["dev"] {
		for _, w := range tok.Tokens(x.Text) {
			counts[w]++
		}
	}
	for _, c := range []struct {
		mapping  string
		min, max float64
	}{{"aggressive", 0.90, 1}, {"balanced", 0, 0.02}} {
		m, err := NewCusText(space, 1, CusTextParams{K: 20, Mapping: c.mapping}, counts)
		if err != nil {
			t.Fatal(err)
		}
		mp := m.Mapping()
		// N of "N–M": the words mapped to a set (task words and the
		// members a balanced set was assigned to), sets compared by content.
		users := map[string]int{}
		key := func(x int32) string {
			s := slices.Clone(mp.Sets[mp.Of[x]])
			slices.Sort(s)
			return fmt.Sprint(s)
		}
		for x := range mp.Of {
			users[key(x)]++
		}
		var lone, all int64
		for _, x := range mp.Order {
			n := counts[e.Words[x]]
			all += n
			if users[key(x)] == 1 {
				lone += n
			}
		}
		share := float64(lone) / float64(all)
		t.Logf("%s K=20 on SST-2 dev: %.2f%% of tokens not of type N–M (%d input words, %d sets)", c.mapping, 100*share, len(mp.Order), len(mp.Sets))
		if share < c.min || share > c.max {
			t.Errorf("%s: %.4f not within [%v, %v]", c.mapping, share, c.min, c.max)
		}
	}
}
