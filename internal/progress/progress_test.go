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

// TestFinishKeepsWhereItStopped: a bar finished before its count reached
// the total (an interrupted loop) stays where it was; one that reached it
// shows it full.
func TestFinishKeepsWhereItStopped(t *testing.T) {
	for _, c := range []struct {
		add       int64
		want, not string
	}{{3, "cells: stopped at 3 of 10", "10/10"}, {10, "10/10", "stopped"}} {
		var buf bytes.Buffer
		b := newBar(&buf, 10, "cells", false)
		b.Add(c.add)
		b.Finish()
		frames := strings.Split(buf.String(), "\r")
		last := frames[len(frames)-1]
		if len(frames) > 1 && strings.TrimSpace(last) == "" {
			last = frames[len(frames)-2]
		}
		if !strings.Contains(last, c.want) || strings.Contains(buf.String(), c.not) {
			t.Errorf("%d of 10, finished: last frame %q, want %q", c.add, last, c.want)
		}
	}
}
