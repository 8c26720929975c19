package metrics

import (
	"math"
	"testing"
)

func TestPrivatizationShares(t *testing.T) {
	// 100 tokens: 30 without a vector, 10 kept by a stopword rule, 60
	// given to the mechanism, 18 of which it returned unchanged. Unchanged
	// is one share: the kept stopwords count (28 of the 70 with a vector).
	p := Privatization{Tokens: 100, OOV: 30, Stopwords: 10, Unchanged: 18, Epsilon: 5}
	if p.InVocab() != 60 || p.WithVector() != 70 || p.UnchangedShare() != 0.4 || p.KeptShare() != 1.0/7 || p.OOVShare() != 0.3 || p.OriginalProportion() != 0.58 {
		t.Errorf("in vocab %d, with a vector %d, unchanged %v, kept %v, OOV %v, original %v", p.InVocab(), p.WithVector(), p.UnchangedShare(), p.KeptShare(), p.OOVShare(), p.OriginalProportion())
	}
	if !math.IsNaN((Privatization{}).UnchangedShare()) {
		t.Error("share of nothing is not NaN")
	}
	var sum Privatization
	sum.Add(p)
	sum.Add(p)
	if sum.Tokens != 200 || sum.UnchangedShare() != 0.4 {
		t.Errorf("sum %+v", sum)
	}
}

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		name string
		rep  Privatization
		want []string
	}{
		{"fine", Privatization{Tokens: 100, OOV: 10, Unchanged: 50, Epsilon: 10}, nil},
		{"high OOV", Privatization{Tokens: 100, OOV: 35, Unchanged: 5, Epsilon: 10}, []string{"test: 35.0% of tokens out of vocabulary (above 20%) passed through unprivatized"}},
		{"at the limit", Privatization{Tokens: 100, OOV: 20, Unchanged: 5, Epsilon: 10}, nil},
		{"nothing changed", Privatization{Tokens: 100, OOV: 5, Stopwords: 5, Unchanged: 90, Epsilon: 500}, []string{"test: privatization at ε = 500 changed no in-vocabulary token",
			"test: 5.3% of the tokens with a vector kept as they were by a stopword rule, with no guarantee (counted as unchanged)"}},
		{"stopwords kept", Privatization{Tokens: 100, Stopwords: 40, Unchanged: 3, Epsilon: 0.1}, []string{"test: 40.0% of the tokens with a vector kept as they were by a stopword rule, with no guarantee (counted as unchanged)"}},
		{"only OOV", Privatization{Tokens: 10, OOV: 10, Epsilon: 1}, []string{"test: 100.0% of tokens out of vocabulary (above 20%) passed through unprivatized"}},
	} {
		got := Flags(map[string]Privatization{"test": c.rep}, DefaultMaxOOV)
		if len(got) != len(c.want) {
			t.Errorf("%s: %v", c.name, got)
			continue
		}
		for i := range got {
			if got[i].String() != c.want[i] {
				t.Errorf("%s: %q, want %q", c.name, got[i], c.want[i])
			}
		}
	}
}
