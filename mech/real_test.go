package mech

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/internal/realdata"
	"github.com/xp-nlp/xp/mech/knn"
)

// TestRealCusTextTable4 checks the shape of CusText's Table 4 on SST-2:
// the share of input tokens whose output set no other input word shares
// ("not of type N–M") is near 100% for the aggressive mapping and near 0
// for the balanced one (the paper: 96–99.8% and ≤ 0.12% with
// counter-fitted vectors; here the shared fastText vectors).
func TestRealCusTextTable4(t *testing.T) {
	space, counts := realSST2(t, "dev")
	e := space.Emb
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

// BenchmarkRealConservativeMapping times CusText's mappings on the
// shared 300d fastText vectors (44k words) with SST-2's training and dev
// words as inputs, as configs/paper/custext_table3_mappings.yaml builds
// them, and the conservative mapping with every word of the vocabulary
// as an input, on each scoring path of the search this CPU runs (each
// path's mapping must equal the first's):
// `XP_DATA=… go test ./mech -run '^$' -bench RealConservativeMapping
// -benchtime 1x`.
func BenchmarkRealConservativeMapping(b *testing.B) {
	space, counts := realSST2(b, "train", "dev")
	vocab := map[string]int64{}
	for _, w := range space.Emb.Words {
		vocab[w] = 1
	}
	spaces := map[knn.Scoring]*Space{}
	paths := []knn.Scoring{knn.ScoringFloat32, knn.ScoringFloat32Kernel, knn.ScoringInt8AVX2, knn.ScoringInt8}
	for _, sc := range paths {
		ix, err := knn.New(space.Emb.Data, space.Emb.Len(), space.Emb.Dim, gotch.CPU, knn.Options{Scoring: sc})
		if err != nil {
			b.Logf("SKIP %s rows: %v", sc, err)
			continue
		}
		b.Cleanup(ix.Close)
		spaces[sc] = &Space{Emb: space.Emb, Index: ix}
	}
	var first *Mapping // every path must build the same mapping
	for _, c := range []struct {
		inputs, mapping, removed string
		k                        int
	}{
		{"sst2", "balanced", "", 100}, {"sst2", "conservative", "drop", 20}, {"sst2", "conservative", "zero", 20},
		{"sst2", "conservative", "drop", 100}, {"sst2", "conservative", "zero", 100},
		{"vocabulary", "conservative", "drop", 20}, {"vocabulary", "conservative", "drop", 100},
	} {
		first = nil
		for _, sc := range paths {
			sp := spaces[sc]
			if sp == nil {
				continue
			}
			b.Run(fmt.Sprintf("%s/%s-%s-K%d/%s", c.inputs, c.mapping, c.removed, c.k, sc), func(b *testing.B) {
				in := counts
				if c.inputs == "vocabulary" {
					in = vocab
				}
				for i := 0; i < b.N; i++ {
					before := sp.Index.Stats().Fallbacks
					m, err := NewCusText(sp, 1, CusTextParams{K: c.k, Mapping: c.mapping, Removed: c.removed}, in)
					if err != nil {
						b.Fatal(err)
					}
					mp := m.Mapping()
					if first == nil {
						first = mp
					} else if !reflect.DeepEqual(mp, first) {
						b.Fatalf("%s builds another mapping than the first path", sc)
					}
					fills := 0
					for _, z := range mp.Zeroed {
						for _, v := range z {
							if v {
								fills++
							}
						}
					}
					b.ReportMetric(float64(len(mp.Order)), "inputs")
					b.ReportMetric(float64(len(mp.Sets)), "sets")
					b.ReportMetric(float64(fills), "zeroed-members")
					b.ReportMetric(float64(sp.Index.Stats().Fallbacks-before), "fallbacks")
				}
			})
		}
	}
}

// realSST2 is the shared 300d fastText vectors as a Space and the word
// counts of SST-2's given splits (default tokenizer); it skips without
// the data root.
func realSST2(tb testing.TB, splits ...string) (*Space, map[string]int64) {
	tb.Helper()
	root := realdata.Root(tb)
	d, err := datasets.Load(context.Background(), root, "sst2", datasets.Options{})
	if err != nil {
		tb.Skipf("SKIP: %v", err)
	}
	e, err := embedding.Load(context.Background(), filepath.Join(root, "embeddings/fasttext-sg-xpcorpus-300d.vec.gz"),
		embedding.Options{CacheDir: filepath.Join(tb.TempDir(), "cache")})
	if err != nil {
		tb.Skipf("SKIP: %v", err)
	}
	space, err := NewSpace(e, gotch.CPU, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(space.Close)
	tok := datasets.DefaultTokenizer()
	counts := map[string]int64{}
	for _, split := range splits {
		for _, x := range d.Splits[split] {
			for _, w := range tok.Tokens(x.Text) {
				counts[w]++
			}
		}
	}
	return space, counts
}
