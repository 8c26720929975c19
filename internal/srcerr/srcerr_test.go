package srcerr

import (
	"errors"
	"io"
	"testing"
)

func TestFormat(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{At("a.tsv", 3, "missing column %q", "label"), `a.tsv:3: missing column "label"`},
		{At("a.tsv", 0, "empty file"), "a.tsv: empty file"},
		{Wrap("b.gz", 7, io.ErrUnexpectedEOF), "b.gz:7: unexpected EOF"},
		{Wrap("outer", 1, At("inner", 2, "x")), "inner:2: x"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	if !errors.Is(Wrap("f", 1, io.ErrUnexpectedEOF), io.ErrUnexpectedEOF) {
		t.Error("Wrap lost its cause")
	}
	if Wrap("f", 1, nil) != nil {
		t.Error("Wrap(nil) != nil")
	}
}
