package near

import "testing"

func TestDidYouMean(t *testing.T) {
	known := []string{"laplace", "vickrey", "santext", "santext+", "tem"}
	for _, c := range []struct{ name, want string }{
		{"lapalce", `; did you mean "laplace"?`},
		{"santex", `; did you mean "santext"?`},
		{"santext++", `; did you mean "santext+"?`},
		{"gumbel", ""},
		{"te", `; did you mean "tem"?`},
		{"t", ""}, // fewer characters than edits: no guess
	} {
		if got := DidYouMean(c.name, known); got != c.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"epoch", "epochs", 1}, {"sedes", "seeds", 2}, {"", "ab", 2}, {"ε", "e", 1}, {"same", "same", 0}, {"kitten", "sitting", 3}} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
