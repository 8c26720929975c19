package results

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/stats"
)

// StatRow is one line of an analysis table: an analysis at one mechanism
// setting and ε, each statistic aggregated over seeds.
type StatRow struct {
	Analysis string
	Setting  string // "none" for an analysis without mechanism
	Notion   spec.Notion
	Epsilon  float64
	Seeds    int
	Failed   int
	Names    []string  // the statistics, in the analysis's order
	Mean, SD []float64 // over seeds (SD 0 for one seed)
	// CI is the half-width of the 95% t-interval of the mean over seeds
	// (NaN for one seed).
	CI []float64
	// Interval is a one-seed row's recorded interval of each statistic
	// its record gives one for, by name: a value estimated from draws
	// (E_M's over the draws), from a sample of words (a percentile's
	// order-statistic interval), or simulated within an otherwise exact
	// method (a query attack's N from simulated votes): absent where none.
	Interval map[string][2]float64
	// Bracket is, for each statistic a search stopped at (an ε found by
	// bisection), the hull over seeds of the brackets the searches left
	// open (metrics.Stat.Quantized): the value is known to no finer.
	Bracket map[string][2]float64
	// BySeed are each statistic's values by seed (the claims compare two
	// rows measured on the same seeds pairwise).
	BySeed BySeed
	// Examples are the first seed's example outputs per word.
	Examples map[string][]string
	// Series are the per-word values of the seeds' records pooled (each
	// seed samples its own words): plausible-deniability's N_w and S_w.
	Series map[string][]float64
	Method string
	Notes  []string
	// Flags are the seeds' records' flags (metrics.Analysis.Flags), each
	// once, with how many seeds raised it where not all did.
	Flags []string
}

// AnalysisTable aggregates analysis records into rows by setting and ε:
// by analysis, then the settings in order (the config's; unlisted ones
// after them, by name), then ε.
func AnalysisTable(recs []Record, order []string) []StatRow {
	type key struct {
		analysis, setting string
		eps               float64
	}
	groups := map[key][]Record{}
	var seen []key
	for _, r := range recs {
		if r.Cell.Analysis == "" {
			continue
		}
		k := key{r.Cell.Analysis, r.Cell.Setting(), r.Cell.Epsilon}
		if _, ok := groups[k]; !ok {
			seen = append(seen, k)
		}
		groups[k] = append(groups[k], r)
	}
	var rows []StatRow
	for _, k := range seen {
		row := StatRow{Analysis: k.analysis, Setting: k.setting, Epsilon: k.eps}
		values := map[string][]float64{}
		flagSeeds := map[string]int{}
		var flagOrder []string
		for _, r := range groups[k] {
			row.Notion = cmp.Or(row.Notion, r.Notion)
			if r.Status != "ok" || r.Analysis == nil {
				row.Failed++
				continue
			}
			row.Seeds++
			if row.Examples == nil {
				row.Examples, row.Method = r.Analysis.Examples, r.Analysis.Method
			}
			for name, xs := range r.Analysis.Series {
				if row.Series == nil {
					row.Series = map[string][]float64{}
				}
				for _, x := range xs {
					row.Series[name] = append(row.Series[name], float64(x))
				}
			}
			for _, n := range r.Analysis.Notes {
				if !slices.Contains(row.Notes, n) {
					row.Notes = append(row.Notes, n)
				}
			}
			for _, f := range r.Analysis.Flags {
				if flagSeeds[f] == 0 {
					flagOrder = append(flagOrder, f)
				}
				flagSeeds[f]++
			}
			for _, s := range r.Analysis.Stats {
				if !slices.Contains(row.Names, s.Name) {
					row.Names = append(row.Names, s.Name)
				}
				values[s.Name] = append(values[s.Name], float64(s.Value))
				row.BySeed.set(s.Name, r.Cell.Seed, float64(s.Value))
				if s.Quantized {
					if row.Bracket == nil {
						row.Bracket = map[string][2]float64{}
					}
					b, ok := row.Bracket[s.Name]
					if !ok {
						b = [2]float64{math.Inf(1), math.Inf(-1)}
					}
					row.Bracket[s.Name] = [2]float64{min(b[0], float64(s.Lo)), max(b[1], float64(s.Hi))}
				}
				if s.Simulated || s.Lo != s.Hi {
					if row.Interval == nil {
						row.Interval = map[string][2]float64{}
					}
					row.Interval[s.Name] = [2]float64{float64(s.Lo), float64(s.Hi)}
				}
			}
		}
		if row.Seeds != 1 {
			row.Interval = nil // over seeds the t-interval speaks
		}
		for _, f := range flagOrder {
			if n := flagSeeds[f]; n < row.Seeds {
				f = fmt.Sprintf("%s (%d of %d seeds)", f, n, row.Seeds)
			}
			row.Flags = append(row.Flags, f)
		}
		for _, n := range row.Names {
			m, sd, ci := stats.MeanCI(values[n])
			row.Mean, row.SD, row.CI = append(row.Mean, m), append(row.SD, sd), append(row.CI, ci)
		}
		rows = append(rows, row)
	}
	place := func(setting string) int {
		if i := slices.Index(order, setting); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(rows, func(a, b StatRow) int {
		return cmp.Or(strings.Compare(a.Analysis, b.Analysis), cmp.Compare(place(a.Setting), place(b.Setting)), strings.Compare(a.Setting, b.Setting), cmp.Compare(a.Epsilon, b.Epsilon))
	})
	return rows
}

// Stat returns the mean and sd of the named statistic (NaN when absent).
func (r StatRow) Stat(name string) (mean, sd float64) {
	i := slices.Index(r.Names, name)
	if i < 0 {
		return math.NaN(), math.NaN()
	}
	return r.Mean[i], r.SD[i]
}

// statNames are the statistics of all rows, in first-seen order.
func statNames(rows []StatRow) []string {
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

func fnum(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "∞"
	case math.IsNaN(x):
		return "—"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// AnalysisMarkdown renders the rows: a table per analysis (or stage),
// one column per statistic, mean ± sd over seeds; then each row's example
// outputs and notes.
func AnalysisMarkdown(rows []StatRow) string {
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
func AnalysisLaTeX(rows []StatRow) string {
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

// PlugIn is the name tables, figures and long.csv give E_M's plug-in
// estimate where f_M was sampled: biased low (the adversary looks
// stronger than it is), it stands beside the held-out estimate, which
// leads under the name E_M (docs/analyses.md).
const PlugIn = "E_M plug-in (biased low)"

// Honest returns rows as tables and figures show them: where a row has
// E_M's held-out estimate beside the plug-in one (sampled f_M), "E_M" is
// the held-out estimate, in the plug-in's place, the plug-in moves to the
// held-out's place as PlugIn, and "recovery" is 1 − the held-out E_M. An
// exact E_M stays as it is: one E_M column, the honest estimate first.
// rows are not modified (the claims read the statistics as recorded).
func Honest(rows []StatRow) []StatRow {
	out := make([]StatRow, len(rows))
	for k, r := range rows {
		i, h := slices.Index(r.Names, "E_M"), slices.Index(r.Names, "E_M held-out")
		if i < 0 || h < 0 {
			out[k] = r
			continue
		}
		r.Names, r.Mean, r.SD, r.CI = slices.Clone(r.Names), slices.Clone(r.Mean), slices.Clone(r.SD), slices.Clone(r.CI)
		r.Names[i], r.Names[h] = "E_M", PlugIn
		r.Mean[i], r.Mean[h] = r.Mean[h], r.Mean[i]
		r.SD[i], r.SD[h] = r.SD[h], r.SD[i]
		r.CI[i], r.CI[h] = r.CI[h], r.CI[i]
		if v, ok := r.Interval["E_M"]; ok {
			r.Interval = maps.Clone(r.Interval)
			delete(r.Interval, "E_M")
			r.Interval[PlugIn] = v
		}
		if j := slices.Index(r.Names, "recovery"); j >= 0 {
			r.Mean[j], r.SD[j], r.CI[j] = 1-r.Mean[i], r.SD[i], r.CI[i]
			if _, ok := r.Interval["recovery"]; ok {
				r.Interval = maps.Clone(r.Interval)
				delete(r.Interval, "recovery")
			}
		}
		out[k] = r
	}
	return out
}

// AnalysisGrids are the analysis tables of AnalysisMarkdown: one per
// analysis (captioned with its name when there are several), the
// neighbour distances pivoted to k by percentile, E_M as Honest shows it.
func AnalysisGrids(rows []StatRow) []Grid {
	var out []Grid
	rows = Honest(rows)
	kinds := AnalysisKinds(rows)
	for _, kind := range kinds {
		mine := slices.DeleteFunc(slices.Clone(rows), func(r StatRow) bool { return r.Analysis != kind })
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
		ownEps := !slices.Contains(names, foundEpsilon) || slices.ContainsFunc(mine, func(r StatRow) bool { return r.EpsilonText() != "—" })
		g.column("mechanism", false)
		g.column("notion", false)
		if ownEps {
			g.column("ε", true)
		}
		g.column("seeds", true)
		for _, n := range names {
			g.column(n, true)
		}
		flagged := slices.ContainsFunc(mine, func(r StatRow) bool { return len(r.Flags) > 0 })
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
		if slices.Contains(names, "accuracy") && slices.ContainsFunc(mine, func(r StatRow) bool { return r.Seeds > 0 && r.Seeds < 3 }) {
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
func AnalysisExamples(rows []StatRow) []Examples {
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
func neighbourGrids(rows []StatRow) []Grid {
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
func AnalysisKinds(rows []StatRow) []string {
	var kinds []string
	for _, r := range rows {
		if !slices.Contains(kinds, r.Analysis) {
			kinds = append(kinds, r.Analysis)
		}
	}
	return kinds
}

// EpsilonText is the row's ε as written in tables: — where the row has
// none (the baseline, or a statistic that is not per ε).
func (r StatRow) EpsilonText() string {
	if r.Setting == "none" || r.Epsilon == 0 {
		return "—"
	}
	return strconv.FormatFloat(r.Epsilon, 'g', -1, 64)
}

// SeedsText is the row's number of seeds, with its failed ones.
func (r StatRow) SeedsText() string {
	s := strconv.Itoa(r.Seeds)
	if r.Failed > 0 {
		s += fmt.Sprintf(" (%d failed)", r.Failed)
	}
	return s
}

// StatText is statistic name's mean, ± its sd over seeds where more than
// one seed gave it and the seeds differ by more than rounding (an sd
// below 1e-9 of the mean is the arithmetic's, not the seeds': 999, not
// 999 ± 9.583e-12).
func (r StatRow) StatText(name string) string {
	m, sd := r.Stat(name)
	cell := fnum(m)
	if r.Seeds > 1 && !math.IsNaN(sd) && sd > 1e-9*math.Abs(m) {
		cell += " ± " + fnum(sd)
	}
	return cell
}

// ColumnName is a statistic's display name as a CSV column: lower case,
// "%" as "pct", ε as "epsilon", every other run of non-alphanumerics one
// underscore ("N_w %" → "n_w_pct", "E_M held-out" → "e_m_held_out").
func ColumnName(display string) string {
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
// CI half-width of each statistic, under snake_case names: ColumnName;
// sd and half-width empty under two seeds; the flags last) and
// tables/analysis.md (the display names). ε has one column: a row whose
// ε was found rather than given (a matched or selected ε, the statistic
// "ε") has it there, with its sd and half-width beside it, not 0.
func WriteAnalysisTables(dir string, rows []StatRow) ([]string, error) {
	td := filepath.Join(dir, "tables")
	if err := os.MkdirAll(td, 0o777); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	rows = Honest(rows)
	names := slices.DeleteFunc(statNames(rows), func(n string) bool { return n == foundEpsilon })
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	// spread is a statistic's mean, sd and half-width as the CSV has them.
	spread := func(r StatRow, i int) []string {
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
		c := ColumnName(n)
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
			return nil, fmt.Errorf("results: %w", err)
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths, nil
}
