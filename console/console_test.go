package console

import "testing"

// TestPrintable: what a terminal would act on — an escape sequence that
// retitles or clears it, a carriage return, a C1 control, a byte that is
// not UTF-8 — is shown escaped; text, tabs and non-ASCII letters stay.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"boom":                      "boom",
		"naïve\tword":               "naïve\tword",
		"\x1b]0;pwned\x07rest":      `\x1b]0;pwned\arest`,
		"\x1b[2Jcleared":            `\x1b[2Jcleared`,
		"half\rover":                `half\rover`,
		"c1 \u009b control":         `c1 \u009b control`,
		"bad \xff byte":             `bad \xff byte`,
		"a real \uFFFD replacement": "a real \uFFFD replacement",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
