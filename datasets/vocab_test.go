package datasets

import (
	"reflect"
	"testing"
)

func TestVocab(t *testing.T) {
	tokens := []string{"b", "a", "c", "a", "b", "a", "d", "<pad>"}
	c := NewCounter()
	c.Add(tokens...)
	rev := NewCounter()
	for i := len(tokens) - 1; i >= 0; i-- {
		rev.Add(tokens[i])
	}
	cases := []struct {
		opt   VocabOptions
		words []string
	}{
		{VocabOptions{}, []string{"a", "b", "<pad>", "c", "d"}},
		{VocabOptions{MinCount: 2}, []string{"a", "b"}},
		{VocabOptions{MaxSize: 3}, []string{"a", "b", "<pad>"}},
		{VocabOptions{MaxSize: 3, Reserved: []string{"<pad>", "<unk>"}}, []string{"<pad>", "<unk>", "a"}},
	}
	for _, k := range cases {
		v := c.Vocab(k.opt)
		if !reflect.DeepEqual(v.Words, k.words) {
			t.Errorf("%+v: words %q, want %q", k.opt, v.Words, k.words)
		}
		if w := rev.Vocab(k.opt).Words; !reflect.DeepEqual(w, v.Words) {
			t.Errorf("%+v: order of tokens changed the vocabulary: %q vs %q", k.opt, w, v.Words)
		}
		for i, w := range v.Words {
			if id, ok := v.ID(w); !ok || int(id) != i {
				t.Errorf("ID(%q) = %d, %v; want %d", w, id, ok, i)
			}
		}
	}
	v := c.Vocab(VocabOptions{MinCount: 2})
	if v.Total != 8 || v.Freq(0) != 3.0/8 {
		t.Errorf("Total %d Freq(a) %v, want 8 and 0.375", v.Total, v.Freq(0))
	}
	if _, err := NewVocab([]string{"x", "y", "x"}); err == nil {
		t.Error("NewVocab accepted a duplicate")
	}
}
