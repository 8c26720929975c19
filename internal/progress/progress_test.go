package progress

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestQuietOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 10, "x", false)
	if b != nil {
		t.Fatal("bar drawn on a non-terminal writer")
	}
	// A nil bar is usable.
	b.Add(3)
	b.Describe("y")
	b.Finish()
	got, err := io.ReadAll(b.Reader(strings.NewReader("data")))
	if err != nil || string(got) != "data" || buf.Len() != 0 {
		t.Errorf("nil bar reader: %q %v, wrote %q", got, err, buf.String())
	}
}
