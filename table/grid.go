package table

import (
	"fmt"
	"strings"

	"github.com/xp-nlp/xp/internal/show"
)

// Grid is a table as data: its header, its cells as printed, which
// columns hold numbers, and the paragraphs under it. Every table xp shows
// is built once as a Grid and rendered by its reader: Markdown for the
// terminal and docs, HTML for the report page (package report), LaTeX
// for a paper, so that all always print the same numbers.
type Grid struct {
	// Caption, when set, is printed above the table ("Caption:").
	Caption string
	Header  []string
	// Numeric marks the columns that hold numbers (right-aligned; the
	// page sorts them by value).
	Numeric []bool
	// Strong marks the columns printed in bold (the agreement's verdict).
	Strong []bool
	Rows   [][]string
	// Notes are the paragraphs under the table (chance level, how the
	// intervals are computed, the privacy unit).
	Notes []string
}

// column adds a column to the grid's header.
func (g *Grid) column(name string, numeric bool) {
	g.Header = append(g.Header, name)
	g.Numeric = append(g.Numeric, numeric)
}

// IsNumeric reports whether column i holds numbers.
func (g Grid) IsNumeric(i int) bool { return i < len(g.Numeric) && g.Numeric[i] }

// IsStrong reports whether column i is printed in bold.
func (g Grid) IsStrong(i int) bool { return i < len(g.Strong) && g.Strong[i] }

// Markdown renders the grid as a GitHub-flavoured Markdown table (cells'
// '|' escaped, line breaks as spaces), its caption above and its notes
// below, each note its own paragraph.
func (g Grid) Markdown() string {
	var b strings.Builder
	if g.Caption != "" {
		b.WriteString(g.Caption + ":\n\n")
	}
	b.WriteString("|")
	for _, h := range g.Header {
		b.WriteString(" " + mdCell(h) + " |")
	}
	b.WriteString("\n|")
	for i := range g.Header {
		if g.IsNumeric(i) {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, row := range g.Rows {
		b.WriteString("|")
		for i, c := range row {
			c = mdCell(c)
			if g.IsStrong(i) && c != "" {
				c = "**" + c + "**"
			}
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	for _, n := range g.Notes {
		b.WriteString("\n" + htmlEscaper.Replace(show.Terminal(n)) + "\n")
	}
	return b.String()
}

// mdCell escapes a cell for a Markdown table (show.Markdown): its pipes,
// line breaks, control characters, the characters that would make it
// HTML (Markdown passes HTML through: a word list's "<script>" reached
// tables/analysis.md raw) and link forms.
func mdCell(s string) string {
	return show.Markdown(s)
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// LaTeX renders the grid as a booktabs tabular for a paper: numeric
// columns right-aligned, every cell escaped (texEscape: ε, Δ, ± and the
// like as math, TeX's special characters quoted), the caption and the
// notes as comments above it.
func (g Grid) LaTeX() string {
	var b strings.Builder
	if g.Caption != "" {
		b.WriteString("% " + oneLine(g.Caption) + "\n")
	}
	for _, n := range g.Notes {
		b.WriteString("% " + oneLine(n) + "\n")
	}
	cols := ""
	for i := range g.Header {
		if g.IsNumeric(i) {
			cols += "r"
		} else {
			cols += "l"
		}
	}
	fmt.Fprintf(&b, "\\begin{tabular}{%s}\n\\toprule\n", cols)
	row := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString(" & ")
			}
			c = texEscape(oneLine(c))
			if c == "" || c == "---" {
				c = "--"
			}
			b.WriteString(c)
		}
		b.WriteString(" \\\\\n")
	}
	row(g.Header)
	b.WriteString("\\midrule\n")
	for _, r := range g.Rows {
		row(r)
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	return b.String()
}

// oneLine is s with its line breaks and control characters as spaces
// (show.Terminal's cleaning, then newlines folded).
func oneLine(s string) string {
	return strings.Join(strings.Fields(show.Terminal(s)), " ")
}
