package spec

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// Markdown renders the descriptors of a kind as the parameter tables of
// docs/config.md (a test keeps that file equal to this output).
func Markdown(k Kind) string {
	var b strings.Builder
	for _, d := range table(k) {
		fmt.Fprintf(&b, "#### `%s`\n\n%s.", d.Name, capital(d.Doc))
		if d.Notion != "" {
			fmt.Fprintf(&b, " Privacy notion: %s", d.Notion)
			if d.Unguarded != "" {
				fmt.Fprintf(&b, " (%s with `%s: true`)", NoDP, d.Unguarded)
			}
			b.WriteString(".")
		}
		if d.Epsilon {
			b.WriteString(" Takes ε (a finite value > 0).")
		}
		if d.Mechanisms != nil {
			fmt.Fprintf(&b, " Mechanisms: only %s (it %s).", strings.Join(d.Mechanisms, ", "), d.MechanismsWhy)
		}
		if d.Reads != "" {
			fmt.Fprintf(&b, " Needs analysis `%s` (it %s).", d.Reads, d.ReadsWhy)
		}
		b.WriteString("\n\n")
		if len(d.Params) == 0 {
			b.WriteString("No parameters.\n\n")
			continue
		}
		b.WriteString("| parameter | type | default | allowed | grid | meaning |\n|---|---|---|---|---|---|\n")
		for _, p := range d.Params {
			grid := ""
			if p.Grid {
				grid = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", p.Name, p.Type, defaultText(p), allowed(p, " \\| "), grid, strings.ReplaceAll(p.Doc, "|", "\\|"))
		}
		if len(d.Exclusive) > 0 {
			for _, g := range d.Exclusive {
				fmt.Fprintf(&b, "\nAt most one of `%s` may be given.\n", strings.Join(g, "`, `"))
			}
		}
		for _, r := range d.Requires {
			fmt.Fprintf(&b, "\n`%s` = %s needs `%s` = %s.\n", r.Param, r.Value, r.Needs, r.NeedsValue)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Help renders the descriptors of a kind for a terminal (`xp help mechanisms`).
func Help(k Kind) string {
	var b strings.Builder
	for _, d := range table(k) {
		fmt.Fprintf(&b, "%s — %s", d.Name, d.Doc)
		if d.Notion != "" {
			fmt.Fprintf(&b, " [%s]", d.Notion)
		}
		b.WriteString("\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, p := range d.Params {
			fmt.Fprintf(tw, "    %s\t%s\tdefault %s\t%s\n", p.Name, allowed(p, " | "), defaultText(p), p.Doc)
		}
		tw.Flush()
		for _, g := range d.Exclusive {
			fmt.Fprintf(&b, "    at most one of %s\n", strings.Join(g, ", "))
		}
		for _, r := range d.Requires {
			fmt.Fprintf(&b, "    %s\n", r)
		}
	}
	return b.String()
}

func defaultText(p Param) string {
	if p.Required {
		return "required"
	}
	if p.DefaultText != "" {
		return p.DefaultText
	}
	switch v := p.Default.(type) {
	case nil:
		return "off"
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(p.Default)
}

// allowed is what the parameter accepts; sep separates alternatives.
func allowed(p Param, sep string) string {
	switch p.Type {
	case String:
		return strings.Join(p.Enum, sep)
	case Bool:
		return "true" + sep + "false"
	}
	return strings.TrimPrefix(strings.TrimPrefix(p.Want(), "a "), "an ")
}

// capital upper-cases the first letter of a sentence.
func capital(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
