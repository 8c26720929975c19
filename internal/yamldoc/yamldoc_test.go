package yamldoc

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g"} {
		bomb += n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+", ", 10), ", ") + "]\n"
		prev = n
	}
	for _, c := range []struct {
		name, doc string
		line      int // 0: accepted
	}{
		{"plain", "a: 1\nb: [1, 2]\n", 0},
		{"aliases within the budget", "a: &a [1, 2]\nb: *a\nc: *a\n", 0},
		{"alias bomb", bomb, 6}, // f's aliases (10^6 nodes) are the first to pass the budget
		{"too many bytes", "a: \"" + strings.Repeat("x", MaxBytes) + "\"\n", -1},
	} {
		_, err := Parse("f.yaml", []byte(c.doc))
		switch {
		case c.line == 0 && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.line > 0 && (err == nil || !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), fmt.Sprintf("f.yaml:%d:", c.line))):
			t.Errorf("%s: %v, want refused as too large at line %d", c.name, err, c.line)
		case c.line < 0 && (err == nil || !strings.Contains(err.Error(), "at most")):
			t.Errorf("%s: %v, want refused unread", c.name, err)
		}
	}
}
