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

// TestPathBeside: a path written ./ or ../ is relative to the config
// file's folder, any other relative path to the data root, an absolute
// one as it is; a resolved config in a run folder resolves ./ against the
// file the user wrote (its origin).
func TestPathBeside(t *testing.T) {
	c := &Config{Data: "/data", file: "studies/a/x.yaml"}
	for p, want := range map[string]string{
		"./my.csv":        "studies/a/my.csv",
		"../other/my.csv": "studies/other/my.csv",
		"sst2/train.tsv":  "/data/sst2/train.tsv",
		"/abs/my.csv":     "/abs/my.csv",
	} {
		if got := c.Path(p); got != want {
			t.Errorf("Path(%q) = %q, want %q", p, got, want)
		}
	}
	resolved := &Config{Data: "/data", file: "runs/x/config.yaml", Origin: &Origin{File: "/home/me/study/x.yaml"}}
	if got := resolved.Path("./my.csv"); got != "/home/me/study/my.csv" {
		t.Errorf("a resolved config's ./my.csv: %q", got)
	}
	if got := c.Beside("my.csv"); got != "studies/a/my.csv" {
		t.Errorf("Beside: %q", got)
	}
}
