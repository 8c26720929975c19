package table

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/spec"
)

// statNames are the statistics of all rows, in first-seen order.
func statNames(rows []results.StatRow) []string {
	var names []string
	for _, r := range rows {
		for _, n := range r.Names {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

// AnalysisMarkdown renders the rows: a table per analysis (or stage),
// one column per statistic, mean ± sd over seeds; then each row's example
// outputs and notes.
func AnalysisMarkdown(rows []results.StatRow) string {
	var b strings.Builder
	for i, g := range AnalysisGrids(rows) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(g.Markdown())
	}
	for _, e := range AnalysisExamples(rows) {
		fmt.Fprintf(&b, "\n%s:\n", e.Heading)
		for _, it := range e.Items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	return b.String()
}

// AnalysisLaTeX renders the tables of AnalysisMarkdown for a paper, one
// booktabs tabular per table (Grid.LaTeX), each captioned in a comment.
func AnalysisLaTeX(rows []results.StatRow) string {
	var b strings.Builder
	b.WriteString("% xp analysis tables: mean ± sd over seeds where there are several (docs/analyses.md defines each statistic).\n")
	for i, g := range AnalysisGrids(rows) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(g.LaTeX())
	}
	return b.String()
}

// AnalysisGrids are the analysis tables of AnalysisMarkdown: one per
// analysis (captioned with its name when there are several), the
// neighbour distances pivoted to k by percentile, E_M as results.Honest shows it.
func AnalysisGrids(rows []results.StatRow) []Grid {
	var out []Grid
	rows = results.Honest(rows)
	kinds := AnalysisKinds(rows)
	for _, kind := range kinds {
		mine := slices.DeleteFunc(slices.Clone(rows), func(r results.StatRow) bool { return r.Analysis != kind })
		if spec.Drawing(kind).ByRank {
			out = append(out, neighbourGrids(mine)...)
			continue
		}
		var g Grid
		if len(kinds) > 1 {
			g.Caption = kind
		}
		names := statNames(mine)
		// A stage that finds ε reports it as a statistic; its rows have no
		// ε of their own, and two columns headed ε would be one too many.
		ownEps := !slices.Contains(names, foundEpsilon) || slices.ContainsFunc(mine, func(r results.StatRow) bool { return r.EpsilonText() != "—" })
		g.column("mechanism", false)
		g.column("notion", false)
		if ownEps {
			g.column("ε", true)
		}
		g.column("seeds", true)
		for _, n := range names {
			g.column(n, true)
		}
		flagged := slices.ContainsFunc(mine, func(r results.StatRow) bool { return len(r.Flags) > 0 })
		if flagged {
			g.column("flags", false)
		}
		for _, r := range mine {
			row := []string{r.Setting, cmp.Or(string(r.Notion), "—")}
			if ownEps {
				row = append(row, r.EpsilonText())
			}
			row = append(row, r.SeedsText())
			for _, n := range names {
				row = append(row, r.StatText(n))
			}
			if flagged {
				row = append(row, strings.Join(r.Flags, "; "))
			}
			g.Rows = append(g.Rows, row)
		}
		if slices.Contains(names, "accuracy") && slices.ContainsFunc(mine, func(r results.StatRow) bool { return r.Seeds > 0 && r.Seeds < 3 }) {
			g.Notes = append(g.Notes, fewSeedsAnalysis)
		}
		out = append(out, g)
	}
	return out
}

// fewSeedsAnalysis is the warning under a table of trained models'
// results (a stage's accuracy) where a line has fewer than 3 seeds.
const fewSeedsAnalysis = "Warning: fewer than 3 seeds on some lines — a trained model's accuracy, and the ε found for it, vary with the seed: one seed gives no interval, two a wide one (t(0.975, 1) = 12.7). Give the config more seeds before comparing these lines."

// Examples are one analysis row's example outputs and notes, as printed
// under the tables.
type Examples struct {
	Heading string   // analysis, setting, ε and method
	Items   []string // "word → outputs", then "note: …"
}

// AnalysisExamples lists, per row that has them, its example outputs
// (by word) and its notes; a note several rows of one analysis carry is
// listed once, after them, with the number of rows (one note stood
// twelve times under a table).
func AnalysisExamples(rows []results.StatRow) []Examples {
	type shared struct{ analysis, note string }
	count := map[shared]int{}
	for _, r := range rows {
		for _, n := range slices.Compact(slices.Clone(r.Notes)) {
			count[shared{r.Analysis, n}]++
		}
	}
	var out []Examples
	var common []shared
	for _, r := range rows {
		e := Examples{Heading: fmt.Sprintf("%s, %s, ε = %s (%s)", r.Analysis, r.Setting, r.EpsilonText(), r.Method)}
		for _, w := range slices.Sorted(maps.Keys(r.Examples)) {
			e.Items = append(e.Items, fmt.Sprintf("%s → %s", w, strings.Join(r.Examples[w], ", ")))
		}
		for _, n := range r.Notes {
			k := shared{r.Analysis, n}
			if count[k] > 1 {
				if !slices.Contains(common, k) {
					common = append(common, k)
				}
				continue
			}
			e.Items = append(e.Items, "note: "+n)
		}
		if len(e.Items) > 0 {
			out = append(out, e)
		}
	}
	for _, k := range common {
		out = append(out, Examples{Heading: fmt.Sprintf("%s, %d rows", k.analysis, count[k]), Items: []string{"note: " + k.note}})
	}
	return out
}

// neighbourGrids pivot the neighbour-distance statistics ("dK pP":
// distance to the K-th neighbour, P-th percentile) into a table of k by
// percentile, one per row.
func neighbourGrids(rows []results.StatRow) []Grid {
	var out []Grid
	for _, r := range rows {
		var ks, ps []string
		for _, n := range r.Names {
			k, p, ok := strings.Cut(n, " ")
			if _, err := strconv.Atoi(strings.TrimPrefix(k, "d")); !ok || err != nil || !strings.HasPrefix(k, "d") {
				continue
			}
			if !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
			if !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
		g := Grid{Caption: fmt.Sprintf("neighbours (distance to the k-th nearest candidate; %s seeds)", r.SeedsText())}
		g.column("k", true)
		for _, p := range ps {
			g.column(p, true)
		}
		for _, k := range ks {
			row := []string{strings.TrimPrefix(k, "d")}
			for _, p := range ps {
				row = append(row, r.StatText(k+" "+p))
			}
			g.Rows = append(g.Rows, row)
		}
		out = append(out, g)
	}
	return out
}

// AnalysisKinds are the analyses (and stages) of the rows in first-seen
// order.
func AnalysisKinds(rows []results.StatRow) []string {
	var kinds []string
	for _, r := range rows {
		if !slices.Contains(kinds, r.Analysis) {
			kinds = append(kinds, r.Analysis)
		}
	}
	return kinds
}

// columnName is a statistic's display name as a CSV column: lower case,
// "%" as "pct", ε as "epsilon", every other run of non-alphanumerics one
// underscore ("N_w %" → "n_w_pct", "E_M held-out" → "e_m_held_out").
func columnName(display string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(display) {
		word := ""
		switch {
		case r == '%':
			word = "pct"
		case r == 'ε':
			word = "epsilon"
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			word = string(r)
		}
		if word == "" {
			sep = b.Len() > 0
			continue
		}
		if sep || (len(word) > 1 && b.Len() > 0) {
			b.WriteByte('_')
		}
		sep = false
		b.WriteString(word)
		if len(word) > 1 {
			sep = true
		}
	}
	return b.String()
}

// foundEpsilon is the statistic a stage that finds an ε (matched
// privacy, Algorithm 2's selection) records it under.
const foundEpsilon = "ε"

// WriteAnalysisTables writes tables/analysis.csv (mean, sd and the 95%
// CI half-width of each statistic, under snake_case names: columnName;
// sd and half-width empty under two seeds; the flags last) and
// tables/analysis.md (the display names). ε has one column: a row whose
// ε was found rather than given (a matched or selected ε, the statistic
// "ε") has it there, with its sd and half-width beside it, not 0.
func WriteAnalysisTables(dir string, rows []results.StatRow) ([]string, error) {
	td := filepath.Join(dir, "tables")
	if err := os.MkdirAll(td, 0o777); err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	rows = results.Honest(rows)
	names := slices.DeleteFunc(statNames(rows), func(n string) bool { return n == foundEpsilon })
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	// spread is a statistic's mean, sd and half-width as the CSV has them.
	spread := func(r results.StatRow, i int) []string {
		sd, ci := "", ""
		if r.Seeds >= 2 { // one seed has no spread to report
			sd, ci = num(r.SD[i]), num(r.CI[i])
		}
		return []string{num(r.Mean[i]), sd, ci}
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	head := []string{"analysis", "setting", "notion", "epsilon", "epsilon_sd", "epsilon_ci95", "seeds", "failed"}
	for _, n := range names {
		c := columnName(n)
		head = append(head, c, c+"_sd", c+"_ci95")
	}
	w.Write(append(head, "flags"))
	for _, r := range rows {
		eps := []string{num(r.Epsilon), "", ""}
		if i := slices.Index(r.Names, foundEpsilon); i >= 0 {
			eps = spread(r, i)
		}
		line := append(append([]string{r.Analysis, r.Setting, string(r.Notion)}, eps...), strconv.Itoa(r.Seeds), strconv.Itoa(r.Failed))
		for _, n := range names {
			if i := slices.Index(r.Names, n); i >= 0 {
				line = append(line, spread(r, i)...)
			} else {
				line = append(line, "", "", "")
			}
		}
		w.Write(append(line, strings.Join(r.Flags, "; ")))
	}
	w.Flush()
	var paths []string
	for name, text := range map[string]string{"analysis.csv": b.String(), "analysis.md": AnalysisMarkdown(rows), "analysis.tex": AnalysisLaTeX(rows)} {
		p := filepath.Join(td, name)
		if err := xio.WriteFileAtomic(p, []byte(text)); err != nil {
			return nil, fmt.Errorf("table: %w", err)
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths, nil
}
