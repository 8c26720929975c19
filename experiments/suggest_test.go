package experiments

import (
	"strings"
	"testing"
)

// TestSuggest: an unknown key is pointed at a close known key of its
// section, or at the section it belongs to (lr under train: model's).
func TestSuggest(t *testing.T) {
	for _, c := range []struct {
		key   string
		path  []string
		known []string
		want  string
	}{
		{"epoch", []string{"train"}, []string{"batch", "epochs", "max_len", "patience"}, `did you mean "epochs"?`},
		{"sedes", nil, []string{"seeds", "stages"}, `did you mean "seeds"?`},
		{"lr", []string{"train"}, []string{"batch", "epochs"}, `"lr" is a key of analysis and of model`},
		{"top", []string{"dataset"}, []string{"name", "path"}, `"top" is a key of analysis and of embedding`},
		{"zzzzzz", nil, []string{"seeds"}, ""},
	} {
		got := suggest(c.key, c.path, c.known)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("suggest(%q in %v) = %q, want %q", c.key, c.path, got, c.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"epoch", "epochs", 1}, {"sedes", "seeds", 2}, {"", "ab", 2}, {"ε", "e", 1}, {"same", "same", 0}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
