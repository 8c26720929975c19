package table

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/spec"
)

// A column is one quantity of the utility table, defined once, by name,
// for every renderer: its fields in results.csv, its heading and cell in
// the Markdown (and HTML) table, and in the LaTeX one. A renderer lists
// the columns it shows by name (csvColumns, gridColumns, texColumns).
type column struct {
	name string
	// csv are its fields in results.csv, in order: snake_case names and
	// their values.
	csv []field
	// title and cell are its heading and cell in the Markdown table ("":
	// not shown there); numeric right-aligns it.
	title   string
	numeric bool
	cell    func(results.Row) string
	// tex and texCell are its heading and cell in results.tex.
	tex     string
	texCell func(results.Row) string
	// when, if set, shows the column in the Markdown and LaTeX tables only
	// where the rows need it (a swept model, a stopword rule, the opt-in
	// measures).
	when func([]results.Row) bool
}

// A field is one CSV column: its header and its value in a row.
type field struct {
	name string
	val  func(results.Row) string
}

// The CSV cells of a field: gota's formats, which results.csv has always
// had (a float with 6 decimals, NaN; an integer; a string as it is).
func num(name string, f func(results.Row) float64) field {
	return field{name, func(r results.Row) string {
		x := f(r)
		if math.IsNaN(x) {
			return "NaN"
		}
		return fmt.Sprintf("%f", x)
	}}
}

func integer(name string, f func(results.Row) int) field {
	return field{name, func(r results.Row) string { return strconv.Itoa(f(r)) }}
}

func text(name string, f func(results.Row) string) field { return field{name, f} }

// columns are the utility table's quantities: every renderer reads them.
var columns = []column{
	{name: "setting", csv: []field{text("setting", func(r results.Row) string { return r.Setting })},
		title: "mechanism", cell: func(r results.Row) string { return r.Setting },
		tex: "Mechanism", texCell: func(r results.Row) string { return texEscape(r.Setting) }},
	{name: "mode", csv: []field{text("mode", func(r results.Row) string { return r.Mode })},
		title: "mode", cell: func(r results.Row) string { return r.Mode },
		tex: "Mode", texCell: func(r results.Row) string { return r.Mode }},
	{name: "epsilon", csv: []field{text("epsilon", func(r results.Row) string { return results.Epsilon(r.Mode, r.Epsilon) })},
		title: "ε", numeric: true, cell: func(r results.Row) string { return cmp.Or(r.EpsilonText(), "—") },
		tex: `$\varepsilon$`, texCell: func(r results.Row) string { return cmp.Or(texEscape(r.EpsilonText()), "--") }},
	{name: "model", csv: []field{text("model", func(r results.Row) string { return r.Model }), num("valid_accuracy", func(r results.Row) float64 { return r.ValidAccuracy }),
		text("model_selected", func(r results.Row) string { return strconv.FormatBool(r.Selected) })},
		title: "model", cell: modelCell, tex: "Model", texCell: func(r results.Row) string { return texEscape(r.Model) },
		when: func(rows []results.Row) bool {
			return slices.ContainsFunc(rows, func(r results.Row) bool { return r.Model != "" })
		}},
	{name: "seeds", csv: []field{integer("seeds", func(r results.Row) int { return r.Seeds }), integer("failed", func(r results.Row) int { return r.Failed })},
		title: "seeds", numeric: true, cell: func(r results.Row) string {
			seeds := strconv.Itoa(r.Seeds)
			if r.Failed > 0 {
				seeds += fmt.Sprintf(" (%d failed)", r.Failed)
			}
			return seeds
		}},
	{name: "accuracy", csv: []field{num("accuracy", func(r results.Row) float64 { return r.Accuracy }), num("accuracy_sd", func(r results.Row) float64 { return r.AccSD }),
		num("accuracy_ci95", func(r results.Row) float64 { return r.AccCI })},
		title: "accuracy", numeric: true, cell: func(r results.Row) string { return pm(r.Accuracy, r.AccSD, r.Seeds) },
		tex: "Accuracy", texCell: func(r results.Row) string { return texPM(r.Accuracy, r.AccCI, 0, 1) }},
	{name: "accuracy_ci", title: "95% CI", numeric: true, cell: func(r results.Row) string { return interval(r.Accuracy, r.AccCI) }},
	{name: "test_set", csv: []field{integer("test_n", func(r results.Row) int { return r.TestN }), num("test_set_lo95", func(r results.Row) float64 { return r.TestLo }),
		num("test_set_hi95", func(r results.Row) float64 { return r.TestHi })},
		title: "test-set 95%", numeric: true, cell: testInterval},
	{name: "diff", csv: []field{num("accuracy_minus_baseline", func(r results.Row) float64 { return r.Diff }), num("accuracy_minus_baseline_ci95", func(r results.Row) float64 { return r.DiffCI }),
		integer("paired_seeds", func(r results.Row) int { return r.DiffSeeds })},
		title: "Δ vs baseline (paired)", numeric: true, cell: func(r results.Row) string { return diff(r.Diff, r.DiffCI) },
		tex: `$\Delta$ vs.\ baseline`, texCell: func(r results.Row) string { return texPM(r.Diff, r.DiffCI, -1, 1) }},
	{name: "p", csv: []field{num("paired_p", func(r results.Row) float64 { return r.VsBaseline.P }), num("paired_p_holm", func(r results.Row) float64 { return r.PHolm }),
		integer("discordant_examples", func(r results.Row) int { return r.VsBaseline.Discordant })},
		title: "p vs baseline (Holm)", numeric: true, cell: pValue},
	{name: "macro_f1", csv: []field{num("macro_f1", func(r results.Row) float64 { return r.MacroF1 }), num("macro_f1_sd", func(r results.Row) float64 { return r.MacroF1SD }),
		num("macro_f1_ci95", func(r results.Row) float64 { return r.MacroF1CI })},
		title: "macro-F1", numeric: true, cell: func(r results.Row) string { return pm(r.MacroF1, r.MacroF1SD, r.Seeds) },
		tex: "Macro-F1", texCell: func(r results.Row) string { return texPM(r.MacroF1, r.MacroF1CI, 0, 1) }},
	{name: "notion", csv: []field{text("notion", func(r results.Row) string { return string(r.Notion) })},
		title: "notion", cell: func(r results.Row) string {
			if r.Mode == "none" {
				return "—"
			}
			return cmp.Or(string(r.Notion), "?")
		}},
	{name: "unchanged", csv: []field{num("unchanged_in_vocab", func(r results.Row) float64 { return r.Unchanged })},
		title: "unchanged (in-vocab)", numeric: true, cell: func(r results.Row) string { return percent(r.Unchanged) },
		tex: "Unchanged", texCell: func(r results.Row) string { return texPercent(r.Unchanged) }},
	{name: "oov", csv: []field{num("oov", func(r results.Row) float64 { return r.OOV })},
		title: "OOV", numeric: true, cell: func(r results.Row) string { return percent(r.OOV) }},
	{name: "kept", csv: []field{num("kept_stopwords", func(r results.Row) float64 { return r.Stopwords })},
		title: "of which kept unguarded", numeric: true, cell: func(r results.Row) string { return percent(r.Stopwords) },
		tex: "Kept unguarded", texCell: func(r results.Row) string { return texPercent(r.Stopwords) }, when: keeps},
	{name: "per_type", csv: []field{num("unchanged_per_type", func(r results.Row) float64 { return r.TypeUnchanged })},
		title: "unchanged per word type", numeric: true, cell: func(r results.Row) string { return percent(r.TypeUnchanged) }},
	{name: "n_w", csv: []field{num("n_w", func(r results.Row) float64 { return r.Nw })},
		title: "N_w", numeric: true, cell: func(r results.Row) string { return percent(r.Nw) }, when: measured},
	{name: "s_w", csv: []field{num("s_w", func(r results.Row) float64 { return r.Sw })},
		title: "S_w", numeric: true, cell: func(r results.Row) string { return percent(r.Sw) }, when: measured},
	{name: "recovery", csv: []field{num("recovery", func(r results.Row) float64 { return r.Recovery })},
		title: "token recovery", numeric: true, cell: func(r results.Row) string { return percent(r.Recovery) }, when: measured},
	{name: "chance", csv: []field{num("chance", func(r results.Row) float64 { return r.Chance })}},
	{name: "flags", csv: []field{text("flags", func(r results.Row) string { return strings.Join(r.Flags, "; ") })},
		title: "flags", cell: func(r results.Row) string { return strings.Join(r.Flags, "; ") }},
	{name: "stage", csv: []field{text("stage", func(r results.Row) string { return r.Stage }), num("epsilon_ci95", func(r results.Row) float64 { return r.EpsCI })}},
}

// The columns each renderer shows, in its order.
var (
	csvColumns  = []string{"setting", "mode", "epsilon", "seeds", "accuracy", "macro_f1", "diff", "notion", "unchanged", "oov", "kept", "per_type", "n_w", "s_w", "recovery", "chance", "test_set", "p", "flags", "stage", "model"}
	gridColumns = []string{"setting", "notion", "mode", "epsilon", "model", "seeds", "accuracy", "accuracy_ci", "test_set", "diff", "p", "macro_f1", "unchanged", "per_type", "oov", "kept", "n_w", "s_w", "recovery", "flags"}
	texColumns  = []string{"setting", "mode", "epsilon", "model", "accuracy", "diff", "macro_f1", "unchanged", "kept"}
)

// col is the column named name.
func col(name string) column {
	i := slices.IndexFunc(columns, func(c column) bool { return c.name == name })
	if i < 0 {
		panic("table: no column " + name) // TestColumnsDefined holds the lists to the columns
	}
	return columns[i]
}

// shown are the columns of names that rows need, in that order.
func shown(names []string, rows []results.Row) []column {
	var out []column
	for _, n := range names {
		if c := col(n); c.when == nil || c.when(rows) {
			out = append(out, c)
		}
	}
	return out
}

// Title is the heading the utility table gives a quantity (its column's
// name: "unchanged" is "unchanged (in-vocab)"), for figures to label it
// as the table does.
func Title(name string) string { return col(name).title }

// measured reports whether a row has the opt-in privacy measures.
func measured(rows []results.Row) bool {
	return slices.ContainsFunc(rows, func(r results.Row) bool { return !math.IsNaN(r.Nw) || !math.IsNaN(r.Recovery) })
}

// keeps reports whether a row's mechanism kept tokens by a stopword rule.
func keeps(rows []results.Row) bool {
	return slices.ContainsFunc(rows, func(r results.Row) bool { return !math.IsNaN(r.Stopwords) && r.Stopwords > 0 })
}

// attacker is the attribute the table's classifier attacks ("" when the
// label is not a private attribute): its accuracy is then the attacker's.
func attacker(rows []results.Row) string {
	if len(rows) == 0 {
		return ""
	}
	return rows[0].Attacker
}

// WriteCSV writes the utility table as CSV (results.csv): every column's
// fields, every row.
func WriteCSV(w io.Writer, rows []results.Row) error {
	cw := csv.NewWriter(w)
	var head []string
	var cs []column // every one: a CSV's columns do not depend on its rows
	for _, n := range csvColumns {
		c := col(n)
		cs = append(cs, c)
		for _, f := range c.csv {
			head = append(head, f.name)
		}
	}
	cw.Write(head)
	for _, r := range rows {
		var line []string
		for _, c := range cs {
			for _, f := range c.csv {
				line = append(line, f.val(r))
			}
		}
		cw.Write(line)
	}
	cw.Flush()
	return cw.Error()
}

// Markdown renders the utility table: accuracy (the attacker's, labelled
// so, when the label is a private attribute) and macro-F1 as mean ± sd
// over seeds, the accuracy's 95% confidence interval, the paired
// difference to the baseline of the same seed with its interval; the
// share of in-vocabulary tokens the mechanism left unchanged, the
// per-word-type unchanged rate and the share of tokens without a vector
// (passed through unprivatized), in percent; the privacy notion ε
// belongs to; warnings; then the chance level and the privacy unit.
func Markdown(rows []results.Row) string { return UtilityGrid(rows).Markdown() }

// UtilityGrid is the utility table of rows as Markdown prints it (see
// Markdown), with its notes.
func UtilityGrid(rows []results.Row) Grid {
	var g Grid
	cs := shown(gridColumns, rows)
	for _, c := range cs {
		title := c.title
		if a := attacker(rows); a != "" && c.name == "accuracy" {
			title = a + " attacker accuracy (lower = more private)"
		}
		g.column(title, c.numeric)
	}
	chance := math.NaN()
	for _, r := range rows {
		var line []string
		for _, c := range cs {
			line = append(line, c.cell(r))
		}
		g.Rows = append(g.Rows, line)
		if math.IsNaN(chance) && !math.IsNaN(r.Chance) {
			chance = r.Chance
		}
	}
	if !math.IsNaN(chance) {
		g.Notes = append(g.Notes, fmt.Sprintf("Chance level (always the evaluated split's most frequent class): %.4f.", chance))
	}
	g.Notes = append(g.Notes, ciNote)
	switch {
	case slices.ContainsFunc(rows, func(r results.Row) bool { return r.Selected }):
		g.Notes = append(g.Notes, "Model: of the config's model sweep, the point chosen per line by the highest mean validation accuracy over seeds (the validation split carved from the training split; the test split plays no part in the choice), the baseline's likewise; Δ and p compare each line with the baseline's chosen point. tables/sweep.md has every point.")
	case col("model").when(rows):
		g.Notes = append(g.Notes, "Model: the line's point of the config's model sweep; Δ and p compare it with the baseline of the same point.")
	}
	if few := slices.ContainsFunc(rows, func(r results.Row) bool { return r.Seeds > 0 && r.Seeds < 3 }); few {
		g.Notes = append(g.Notes, "Warning: fewer than 3 seeds on some lines — their t-interval is wide (2 seeds: t(0.975, 1) = 12.7) or absent (1 seed): read the test-set interval and the paired p there.")
	}
	if keeps(rows) {
		g.Notes = append(g.Notes, keptNote)
	}
	if measured(rows) {
		g.Notes = append(g.Notes, measuresNote)
	}
	if slices.ContainsFunc(rows, func(r results.Row) bool { return r.Mode != "none" }) { // a run of baselines alone privatizes nothing
		g.Notes = append(g.Notes, privacyUnit)
	}
	return g
}

// LaTeX renders the utility table for a paper (booktabs): mechanism,
// mode, ε, accuracy as mean ± 95% half-width (mean alone for one seed),
// the paired difference to the baseline, macro-F1 and the unchanged
// share (with the share kept unguarded beside it where a stopword rule
// kept any).
func LaTeX(rows []results.Row) string {
	var b strings.Builder
	b.WriteString("% xp results: mean ± 95% CI half-width over seeds (Student's t), [low, high] where that would leave the range; Δ paired with the baseline of each seed.\n")
	cs := shown(texColumns, rows)
	var align, head []string
	for _, c := range cs {
		title := c.tex
		if attacker(rows) != "" && c.name == "accuracy" {
			title = `Attacker acc. ($\downarrow$)`
		}
		head = append(head, title)
		if c.numeric && c.name != "epsilon" {
			align = append(align, "r")
		} else {
			align = append(align, "l")
		}
	}
	fmt.Fprintf(&b, "\\begin{tabular}{%s}\n\\toprule\n", strings.Join(align, ""))
	b.WriteString(strings.Join(head, " & ") + " \\\\\n\\midrule\n")
	for _, r := range rows {
		var line []string
		for _, c := range cs {
			line = append(line, c.texCell(r))
		}
		b.WriteString(strings.Join(line, " & ") + " \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	return b.String()
}

// modelCell prints a line's model point, marked where Select chose it.
func modelCell(r results.Row) string {
	switch {
	case r.Model == "":
		return "—"
	case r.Selected:
		return r.Model + " (best valid " + strconv.FormatFloat(r.ValidAccuracy, 'f', 4, 64) + ")"
	}
	return r.Model
}

// keptNote is xp's one definition of unchanged and what the kept column
// is, under a table where a stopword rule kept tokens (elsewhere the
// unchanged share is the mechanism's draws alone).
const keptNote = "Unchanged (in-vocab): the share of the tokens with a vector returned as they were, whatever the reason — drawn unchanged, or kept by a stopword rule (CusText+, 1-Diffractor unless replace_stopwords) with no privacy guarantee, the part the column \"of which kept unguarded\" gives; tokens without a vector are the OOV column, passed through unprivatized."

// ciNote says how the intervals are computed.
const ciNote = "Mean ± sample sd over seeds; 95% CI: of the mean over seeds by Student's t (n−1 degrees of freedom; — below 2 seeds), within [0, 1]: it speaks of retraining's spread. " +
	"Test-set 95%: the Wilson interval of the accuracy from the evaluated split's size alone — its own sampling error, which more seeds do not shrink (the same examples score every seed). " +
	"Δ: accuracy minus the baseline's of the same seed, averaged over the seeds that have both, with its t-interval (not shown where every seed's Δ is the same). " +
	"p vs baseline: the sign-flip test of the line's per-example results against the baseline's on the same examples and seeds, each example counted once with its results summed over the seeds (exact; McNemar's exact test at one seed), adjusted by Holm's method over the table's lines; the examples on which they differ in brackets; — where the records hold no per-example results. It conditions on the trained models; the seeds' spread is the Δ interval's."

// measuresNote says what the opt-in measures' columns are.
const measuresNote = "N_w, S_w: mean over the privatized split's word types (its most frequent with a vector, as the config's privacy.top says) of the draws returning the word unchanged and of the distinct outputs, per draw; token recovery: the Bayes adversary's chance of naming a token's original word, 1 − E_M with the split's word frequencies as prior (held-out where f_M is sampled: the plug-in estimate flatters the adversary). Each is the mean over the cell's privatized splits, then over seeds."

// privacyUnit states what ε protects, under every table; which
// mechanism has which notion comes from their descriptors (spec), the one
// place it is stated.
var privacyUnit = func() string {
	by := map[spec.Notion][]string{}
	for _, d := range spec.All(spec.Mechanism) {
		by[d.Notion] = append(by[d.Notion], d.Name)
		if d.Unguarded != "" {
			by[spec.NoDP] = append(by[spec.NoDP], d.Name+" with "+d.Unguarded)
		}
	}
	return fmt.Sprintf("Privacy unit: ε is per token. Under metric DP, ε·d_χ (%s; %s with d the distance along its line of words, metric-dp-line, whose ε is not comparable), a text of n tokens is ε·Σ d(w_i, w′_i)-private against a change of its words, so the guarantee weakens with length and distance; "+
		"pure ε-DP within an output set (%s) composes to n·ε over a text; %s give no guarantee. "+
		"In mode both, training and test text are privatized independently: a text in both is exposed twice.",
		strings.Join(by[spec.MetricDP], ", "), strings.Join(by[spec.LineDP], ", "), strings.Join(by[spec.SetDP], ", "), strings.Join(by[spec.NoDP], ", "))
}()
