package show

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTerminal(t *testing.T) {
	for in, want := range map[string]string{
		"plain word":            "plain word",
		"tab\tand\nline":        "tab\tand\nline",
		"\x1b]0;pwned\x07title": `\x1b]0;pwned\x07title`,
		"\x1b[2Jclear":          `\x1b[2Jclear`,
		"abc\u202edcba":         `abc\u202edcba`,
		"c1\u0085next":          `c1\u0085next`,
		"cr\rover":              `cr\x0dover`,
		"bad\xffbyte":           `bad\xffbyte`,
		"ok \uFFFD kept":        "ok \uFFFD kept",
	} {
		if got := Terminal(in); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	for in, want := range map[string]string{
		"<script>alert(1)</script>": "&lt;script&gt;alert(1)&lt;/script&gt;",
		"[x](javascript:alert(1))":  `[x]\(javascript:alert(1))`,
		"[0.1, 0.2] interval":       "[0.1, 0.2] interval",
		"a|b\nc":                    `a\|b c`,
		"<img src=x onerror=y>":     "&lt;img src=x onerror=y&gt;",
		"\x1b[31mred":               `\x1b[31mred`,
	} {
		if got := Markdown(in); got != want {
			t.Errorf("Markdown(%q) = %q, want %q", in, got, want)
		}
	}
}

// hostile are strings a config name, a path or a word could hold.
var hostile = []string{"", "plain", "with space", "$(touch /tmp/xp-pwned)", "`id`", "a'b", "'", "\"dq\"", "semi;colon", "new\nline", "glob*?[x]", "~user", "back\\slash", "tab\there", "-n", "€uro", "#comment", "a&b|c>d<e"}

// TestShell: the quoted word, run through sh, is the word: sh -n finds
// the line well formed and printf prints the word back byte for byte.
func TestShell(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, s := range hostile {
		line := "printf '%s' " + Shell(s)
		if err := exec.Command("sh", "-n", "-c", line).Run(); err != nil {
			t.Errorf("sh -n on %q: %v", line, err)
		}
		out, err := exec.Command("sh", "-c", line).Output()
		if err != nil || string(out) != s {
			t.Errorf("%q quoted as %s: sh printed %q (%v)", s, Shell(s), out, err)
		}
	}
	if got := ShellLine("xp", "run", "--set", "name=a b"); got != "xp run --set 'name=a b'" {
		t.Errorf("ShellLine: %s", got)
	}
}

// FuzzWriter: whatever bytes are written, in whatever pieces, what
// reaches the terminal holds no unsafe rune and no ESC but xp's display
// sequences; text without anything unsafe passes unchanged.
func FuzzWriter(f *testing.F) {
	for _, s := range []string{"plain\n", "\x1b[2K\rbar 50%", "\x1b]0;t\x07", "\u202eevil", "\xff\xfe", "ok\x1b[9;31mred\x1b[0m", "\x1b", "é"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		var out bytes.Buffer
		w := Writer(&out)
		k := int(cut) % (len(data) + 1)
		w.Write(data[:k])
		w.Write(data[k:])
		w.Write([]byte("\n")) // completes any held tail
		got := out.Bytes()
		for i := 0; i < len(got); {
			if got[i] == 0x1b {
				n, complete := display(got[i:])
				if n == 0 || !complete {
					t.Fatalf("%q shows as %q: an ESC at %d starts no display sequence", data, got, i)
				}
				i += n
				continue
			}
			r, size := utf8.DecodeRune(got[i:])
			if (Unsafe(r) && r != '\r') || (r == utf8.RuneError && size == 1) {
				t.Fatalf("%q shows as %q: unsafe %U at %d", data, got, r, i)
			}
			i += size
		}
		if utf8.Valid(data) && !strings.ContainsFunc(string(data), Unsafe) && !bytes.Equal(got, append(data, '\n')) {
			t.Fatalf("safe text %q shows as %q", data, got)
		}
	})
}

// TestWriterConcurrent: writes from several goroutines (a progress bar
// and a log share standard error) arrive whole, each line intact.
func TestWriterConcurrent(t *testing.T) {
	var out bytes.Buffer
	w := Writer(&out)
	done := make(chan bool)
	for g := range 8 {
		go func() {
			for range 200 {
				w.Write([]byte(strings.Repeat(string(rune('a'+g)), 40) + "\n"))
			}
			done <- true
		}()
	}
	for range 8 {
		<-done
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1600 {
		t.Fatalf("%d lines, want 1600", len(lines))
	}
	for _, l := range lines {
		if len(l) != 40 || strings.Count(l, l[:1]) != 40 {
			t.Fatalf("a line written in pieces: %q", l)
		}
	}
}
