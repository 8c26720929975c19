package jsondup

import "testing"

func TestFirst(t *testing.T) {
	for _, c := range []struct {
		in, want string
		dup      bool
	}{
		{`{"a": 1, "b": 2}`, "", false},
		{`{"a": 1, "a": 2}`, "a", true},
		{`{"a": {"x": 1, "y": {}}, "b": [{"x": 1}, {"x": 2}], "c": 3}`, "", false},
		{`{"a": {"x": 1, "y": {}, "x": 2}}`, "a.x", true},
		{`{"a": [1, {"k": 1, "k": 2}]}`, "a.k", true},
		{`{"a": {}, "a": {}}`, "a", true},
		{`{"weight": {"dtype": "F32"}, "bias": {}, "weight": {"dtype": "F16"}}`, "weight", true},
		{`[{"a": 1}, {"a": 1}]`, "", false},
		{`{"a": [], "b": {"c": []}, "a": 0}`, "a", true},
		{`{}`, "", false},
		{`"text"`, "", false},
		{`{"model": {"vocab": {"hello": 1, "héllo": 2, "hello": 3}}}`, "model.vocab.hello", true},
	} {
		got, dup, err := First([]byte(c.in))
		if err != nil || got != c.want || dup != c.dup {
			t.Errorf("First(%s) = %q, %v, %v; want %q, %v", c.in, got, dup, err, c.want, c.dup)
		}
	}
	if _, _, err := First([]byte(`{"a": `)); err == nil {
		t.Error("truncated JSON: no error")
	}
}

func FuzzFirst(f *testing.F) {
	f.Add([]byte(`{"a": {"x": [1, {"y": 2}]}, "b": 3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		First(data) // never panics, whatever the bytes
	})
}
