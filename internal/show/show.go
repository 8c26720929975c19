// Package show owns how xp shows text it did not write — words, labels,
// texts, names and paths from a user's files — on a terminal, in
// Markdown and on a shell command line. Every command's standard output
// and error go through Writer, so that no byte a file holds can move the
// cursor, retitle the window, reorder a line (bidi overrides) or end a
// table row; Terminal, Markdown and Shell are the same rules for one
// string.
package show

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Unsafe reports whether r may not be shown as it is: a C0 control but
// tab and line feed, DEL, a C1 control, or a bidirectional override or
// isolate. (Bytes that are no UTF-8 are escaped by Terminal and Writer
// too.)
func Unsafe(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// escape is r written so that it shows: \x1b, \u202e.
func escape(r rune) string {
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// Terminal is s with every unsafe rune (Unsafe) written as an escape, and
// carriage returns too: a line of s shows as one line.
func Terminal(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return Unsafe(r) || r == '\r' }) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Unsafe(r) || r == '\r':
			b.WriteString(escape(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Markdown is s for a Markdown table cell or line: Terminal's escapes,
// HTML's special characters as entities (Markdown passes HTML through),
// the "](" that makes [text](javascript:…) a link escaped, pipes escaped
// and line breaks as spaces.
func Markdown(s string) string {
	return mdEscaper.Replace(Terminal(s))
}

var mdEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", `\|`, "](", `]\(`, "\n", " ", "\t", " ")

// Shell is s quoted for a POSIX shell: as it is where it holds only
// characters no shell treats specially, otherwise in single quotes, each
// single quote inside closed, escaped and reopened. Pasting the result
// gives the program s, whatever s holds.
func Shell(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !shellSafe(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellSafe(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./,:=+@%", r)
}

// ShellLine is the words quoted (Shell) and joined by spaces.
func ShellLine(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Shell(w)
	}
	return strings.Join(q, " ")
}

// Writer writes to w what it is given with every unsafe rune escaped
// (Terminal), but for carriage returns and xp's own display sequences:
// ESC [ followed by digits and semicolons and m (colour) or K (erase the
// line) — what its progress bars and coloured diffs are drawn with, and
// nothing that moves the cursor, titles the window or speaks to the
// terminal. A rune split between two writes is held back until it is
// whole. It is safe for use by several goroutines.
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

// Fd is the descriptor of the file the writer writes to (so that a
// progress bar can tell a terminal), or ^0 when it writes to no file.
func (t *writer) Fd() uintptr {
	if f, ok := t.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

type writer struct {
	mu   sync.Mutex // writes from several goroutines (a progress bar, a log) come whole, in turn
	w    io.Writer
	tail []byte // an incomplete rune or escape sequence from the last write
}

func (t *writer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	buf := append(t.tail, p...)
	t.tail = nil
	var out bytes.Buffer
	for i := 0; i < len(buf); {
		c := buf[i]
		if c == 0x1b {
			n, complete := display(buf[i:])
			if !complete {
				t.tail = append([]byte(nil), buf[i:]...)
				break
			}
			if n > 0 {
				out.Write(buf[i : i+n])
				i += n
				continue
			}
		}
		r, size := utf8.DecodeRune(buf[i:])
		if r == utf8.RuneError && size <= 1 && !utf8.FullRune(buf[i:]) {
			t.tail = append([]byte(nil), buf[i:]...)
			break
		}
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&out, `\x%02x`, c)
		case r == '\r':
			out.WriteByte('\r')
		case Unsafe(r):
			out.WriteString(escape(r))
		default:
			out.Write(buf[i : i+size])
		}
		i += size
	}
	if _, err := t.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// display is the length of the display sequence b starts with (ESC [
// digits-and-semicolons m or K), 0 when it starts with none; complete is
// false when b ends before it could tell.
func display(b []byte) (n int, complete bool) {
	if len(b) < 2 {
		return 0, false
	}
	if b[1] != '[' {
		return 0, true
	}
	for i := 2; i < len(b) && i < 18; i++ {
		switch c := b[i]; {
		case c >= '0' && c <= '9' || c == ';':
		case c == 'm' || c == 'K':
			return i + 1, true
		default:
			return 0, true
		}
	}
	if len(b) < 18 {
		return 0, false
	}
	return 0, true
}
