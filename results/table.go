package results

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-gota/gota/dataframe"
	"github.com/go-gota/gota/series"

	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/stats"
)

// Row is one line of the results table: a mechanism setting, mode and ε,
// aggregated over seeds.
type Row struct {
	Setting string      // "none" for the unprivatized baseline
	Notion  spec.Notion // the mechanism's privacy notion ("" for the baseline)
	Mode    string      // none, train, test, both
	Epsilon float64     // 0 for the baseline; a stage's line: the mean of the ε its seeds found
	// Stage names the stage that ran the line's cells at an ε of its
	// finding (matched-privacy), "" for the config's own cells; EpsCI is
	// then the half-width of the found ε's 95% t-interval over seeds (NaN
	// otherwise, and below two seeds).
	Stage string
	EpsCI float64
	// Model is the line's point of the config's model sweep ("dropout=0.3
	// hidden=64"; experiments.Cell.ModelPoint), "" where none is swept.
	Model string
	// ValidAccuracy is the mean over seeds of the accuracy on the
	// validation split carved from the training split: what Select
	// chooses a model point by; Selected marks a line Select kept.
	ValidAccuracy float64
	Selected      bool
	Seeds         int     // successful cells aggregated
	Failed        int     // failed cells of this line
	Accuracy      float64 // mean over seeds
	AccSD         float64 // sample standard deviation (0 for one seed)
	AccCI         float64 // half-width of the mean's 95% confidence interval (Student's t; NaN below 2 seeds)
	MacroF1       float64
	MacroF1SD     float64
	MacroF1CI     float64
	// Diff is the paired difference of accuracy against the baseline of
	// the same seed (cell − baseline), averaged over the seeds that have
	// both, with its 95% half-width; NaN for the baseline or without a
	// baseline. DiffSeeds counts the pairs.
	Diff, DiffCI float64
	DiffSeeds    int
	// Unchanged is the mean share of the tokens with a vector returned as
	// they were, whatever the reason (metrics.Privatization.UnchangedShare:
	// drawn unchanged, or kept by a stopword rule), over the cell's
	// privatized splits; Stopwords the part of it a stopword rule kept,
	// with no guarantee (KeptShare); OOV the mean share of all tokens
	// without a vector, passed through unprivatized. NaN when nothing was
	// privatized.
	Unchanged, OOV, Stopwords float64
	// UnchangedCI is the half-width of Unchanged's 95% interval over
	// seeds (NaN below two seeds).
	UnchangedCI float64
	// TypeUnchanged is the mean per-word-type unchanged rate (see
	// metrics.Privatization.TypeUnchangedRate; NaN when not measured).
	TypeUnchanged float64
	// Nw, Sw and Recovery are the opt-in privacy measures (config key
	// privacy; Record.Measures) as shares: mean N_w and S_w over the
	// split's word types per draw, and the Bayes adversary's token
	// recovery; per cell the mean over its privatized splits, then the
	// mean over seeds; NaN when not measured.
	Nw, Sw, Recovery float64
	// Chance is the share of the evaluated split's most frequent class:
	// the accuracy of always guessing it.
	Chance float64
	// TestN is the evaluated split's size; TestLo and TestHi the Wilson
	// 95% interval of the accuracy from that split's sampling alone (the
	// same examples score every seed, so more seeds do not narrow it;
	// NaN without a size).
	TestN          int
	TestLo, TestHi float64
	// VsBaseline is the sign-flip test of the line's per-example results
	// against the baseline's of the same seeds on the same examples
	// (stats.SignFlip: each example counts once, however many seeds
	// scored it); its P is NaN where the records hold no per-example
	// results or there is no baseline. PHolm is that P adjusted by Holm's
	// method over every line of the table that has one (NaN likewise).
	VsBaseline stats.Paired
	PHolm      float64
	// correct is the line's per-example results by seed
	// (metrics.Classification.Correct), what its tests pair.
	correct map[uint64]string
	// Attacker names what the classifier attacks when the label is a
	// private attribute (Enron: "authorship"); its accuracy is then the
	// attacker's, lower being more private.
	Attacker string
	// Flags are the warnings of the line's cells (see metrics.Flags).
	Flags []string
	// BySeed are the cells' values by seed ("accuracy", "macro-F1",
	// "Δ accuracy", "unchanged"): the claims compare two lines trained
	// on the same seeds pairwise.
	BySeed     BySeed
	order      int // the setting's place in the config (TableOptions.Order)
	modelOrder int // the model point's place in the sweep (TableOptions.Models)
}

// TableOptions set how a table is judged.
type TableOptions struct {
	// Attacker is the dataset's private attribute, when its classifier is
	// an attacker (datasets.Spec.Attacker).
	Attacker string
	// MaxOOV is the out-of-vocabulary share above which a cell is flagged:
	// the config's checks.max_oov (metrics.DefaultMaxOOV unless it says
	// otherwise; 0 flags any out-of-vocabulary token).
	MaxOOV float64
	// Order lists the settings (experiments.Cell.Setting) in the config's
	// order: rows follow it, then unlisted settings by name.
	Order []string
	// FromStage names, by record key, the stage that ran a utility cell
	// outside the plan (matched-privacy's at the ε it found): cells.csv's
	// stage column.
	FromStage map[string]string
	// Models lists the model sweep's points (experiments.Cell.ModelPoint)
	// in the config's order: lines of one setting follow it.
	Models []string
	// Select keeps, of each line's model points, the one with the best
	// validation accuracy (the config's select: best_by: valid; see
	// selectModels).
	Select bool
}

// Table aggregates records into rows: the baseline first, then by
// setting, mode and ε. The utility cells a stage ran at an ε of its
// finding (opt.FromStage) form one line per setting, mode and stage, over
// their seeds' ε, after the setting's planned lines.
func Table(recs []Record, opt TableOptions) []Row {
	type key struct {
		setting, mode string
		eps           float64
		stage, model  string
	}
	groups := map[key][]Record{}
	baseline := map[modelSeed]float64{} // the baseline's accuracy of a model point and seed
	for _, r := range recs {
		if r.Cell.Analysis != "" {
			continue // analyses and stages have their own table
		}
		k := key{r.Cell.Setting(), r.Cell.Mode, r.Cell.Epsilon, "", r.Cell.ModelPoint()}
		if st := opt.FromStage[r.Key]; st != "" {
			k.eps, k.stage = 0, st
		}
		groups[k] = append(groups[k], r)
		if r.Cell.Mode == "none" && r.Status == "ok" {
			baseline[modelSeed{k.model, r.Cell.Seed}] = r.Test.Accuracy
		}
	}
	var rows []Row
	for k, rs := range groups {
		row := Row{Setting: k.setting, Mode: k.mode, Epsilon: k.eps, Stage: k.stage, Model: k.model, EpsCI: math.NaN(), Unchanged: math.NaN(), OOV: math.NaN(), Stopwords: math.NaN(), Attacker: opt.Attacker,
			Diff: math.NaN(), DiffCI: math.NaN(), Nw: math.NaN(), Sw: math.NaN(), Recovery: math.NaN(), order: len(opt.Order),
			TestLo: math.NaN(), TestHi: math.NaN(), VsBaseline: stats.Paired{P: math.NaN()}, PHolm: math.NaN()}
		if i := slices.Index(opt.Order, k.setting); i >= 0 {
			row.order = i
		}
		row.modelOrder = slices.Index(opt.Models, k.model)
		var acc, f1, unch, oov, stop, types, chance, diff, nw, sw, rec, eps, valid []float64
		for _, r := range rs {
			row.Notion = cmp.Or(row.Notion, r.Notion)
			if r.Status != "ok" {
				row.Failed++
				continue
			}
			acc = append(acc, r.Test.Accuracy)
			f1 = append(f1, r.Test.MacroF1)
			eps = append(eps, r.Cell.Epsilon)
			valid = append(valid, r.Valid.Accuracy)
			row.BySeed.set("accuracy", r.Cell.Seed, r.Test.Accuracy)
			row.BySeed.set("macro-F1", r.Cell.Seed, r.Test.MacroF1)
			if r.Test.Correct != "" {
				if row.correct == nil {
					row.correct = map[uint64]string{}
				}
				row.correct[r.Cell.Seed] = r.Test.Correct
			}
			if b, ok := baseline[modelSeed{k.model, r.Cell.Seed}]; ok && k.mode != "none" {
				diff = append(diff, r.Test.Accuracy-b)
				row.BySeed.set("Δ accuracy", r.Cell.Seed, r.Test.Accuracy-b)
			}
			row.TestN = max(row.TestN, r.Test.N)
			if r.Test.N > 0 && len(r.Test.PerClass) > 0 { // class counts recorded
				most := 0
				for _, c := range r.Test.PerClass {
					most = max(most, c.Support)
				}
				ch := float64(most) / float64(r.Test.N)
				chance = append(chance, ch)
				// The loss as a share of what the baseline learned above
				// chance: tasks with other chance levels share its scale.
				if b, ok := baseline[modelSeed{k.model, r.Cell.Seed}]; ok && k.mode != "none" && b > ch {
					row.BySeed.set(RelativeDiff, r.Cell.Seed, (r.Test.Accuracy-b)/(b-ch))
				}
			}
			p := privacyOf(r)
			if !math.IsNaN(p.unchanged) {
				row.BySeed.set("unchanged", r.Cell.Seed, p.unchanged)
			}
			for _, v := range []struct {
				x   float64
				all *[]float64
			}{{p.unchanged, &unch}, {p.oov, &oov}, {p.stopwords, &stop}, {p.types, &types}, {p.nw, &nw}, {p.sw, &sw}, {p.recovery, &rec}} {
				if !math.IsNaN(v.x) {
					*v.all = append(*v.all, v.x)
				}
			}
			for _, f := range metrics.Flags(r.Privacy, opt.MaxOOV) {
				if !slices.Contains(row.Flags, f.Short()) {
					row.Flags = append(row.Flags, f.Short())
				}
			}
		}
		row.Seeds = len(acc)
		row.ValidAccuracy, _ = stats.MeanSD(valid)
		if k.stage != "" && len(eps) > 0 {
			row.Epsilon, _, row.EpsCI = stats.MeanCI(eps)
		}
		row.Accuracy, row.AccSD, row.AccCI = stats.MeanCI(acc)
		row.MacroF1, row.MacroF1SD, row.MacroF1CI = stats.MeanCI(f1)
		if row.DiffSeeds = len(diff); len(diff) > 0 {
			row.Diff, _, row.DiffCI = stats.MeanCI(diff)
		}
		row.Unchanged, _, row.UnchangedCI = stats.MeanCI(unch)
		row.OOV, _ = stats.MeanSD(oov)
		row.Stopwords, _ = stats.MeanSD(stop)
		row.TypeUnchanged, _ = stats.MeanSD(types)
		row.Nw, _ = stats.MeanSD(nw)
		row.Sw, _ = stats.MeanSD(sw)
		row.Recovery, _ = stats.MeanSD(rec)
		row.Chance, _ = stats.MeanSD(chance)
		if row.Seeds > 0 && row.TestN > 0 {
			row.TestLo, row.TestHi = stats.Wilson(row.Accuracy, row.TestN)
		}
		slices.Sort(row.Flags)
		rows = append(rows, row)
	}
	if opt.Select {
		rows = selectModels(rows)
	}
	testBaseline(rows)
	slices.SortFunc(rows, func(a, b Row) int {
		base := func(r Row) int {
			if r.Mode == "none" {
				return 0
			}
			return 1
		}
		return cmp.Or(cmp.Compare(base(a), base(b)), cmp.Compare(a.order, b.order), strings.Compare(a.Setting, b.Setting), strings.Compare(a.Stage, b.Stage), cmp.Compare(a.modelOrder, b.modelOrder),
			cmp.Compare(ModeRank(a.Mode), ModeRank(b.Mode)), cmp.Compare(a.Epsilon, b.Epsilon))
	})
	return rows
}

// testBaseline tests every privatized line against the baseline of its
// model point (the baseline's chosen point where select chose the
// lines) on the same seeds and examples (Row.VsBaseline) and adjusts the
// p-values over the table by Holm's method (Row.PHolm).
func testBaseline(rows []Row) {
	var ps []float64
	for j := range rows {
		i := slices.IndexFunc(rows, func(r Row) bool { return r.Mode == "none" && (r.Model == rows[j].Model || rows[j].Selected) })
		if i >= 0 && rows[i].correct != nil && rows[j].Mode != "none" && rows[j].correct != nil {
			if t, err := stats.SignFlip(rows[j].correct, rows[i].correct); err == nil {
				rows[j].VsBaseline = t
			}
		}
		ps = append(ps, rows[j].VsBaseline.P)
	}
	for j, p := range stats.Holm(ps) {
		rows[j].PHolm = p
	}
}

// RelativeDiff is the BySeed statistic of a cell's accuracy minus its
// seed's baseline's, divided by the baseline's distance from chance (the
// evaluated split's most frequent class): -1 is a loss of all the
// baseline learned above chance, whatever the task's chance level.
const RelativeDiff = "Δ accuracy relative to chance"

// BySeed are statistics' values by seed: statistic → seed → value.
type BySeed map[string]map[uint64]float64

func (b *BySeed) set(stat string, seed uint64, v float64) {
	if *b == nil {
		*b = BySeed{}
	}
	if (*b)[stat] == nil {
		(*b)[stat] = map[uint64]float64{}
	}
	(*b)[stat][seed] = v
}

// cellPrivacy is a record's privacy shares over its privatized splits
// and its opt-in measures (NaN where not measured; see Row).
type cellPrivacy struct{ unchanged, oov, stopwords, types, nw, sw, recovery float64 }

func privacyOf(r Record) cellPrivacy {
	p := cellPrivacy{math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	for _, m := range []struct {
		stat  string
		to    *float64
		scale float64
	}{{"N_w %", &p.nw, 100}, {"S_w %", &p.sw, 100}, {"recovery", &p.recovery, 1}} {
		var x []float64
		for _, a := range r.Measures {
			v := a.Stat(m.stat)
			if held := a.Stat(m.stat + " held-out"); !math.IsNaN(held) {
				v = held // sampled f_M: the plug-in recovery flatters the adversary (docs/analyses.md)
			}
			if !math.IsNaN(v) {
				x = append(x, v/m.scale)
			}
		}
		if len(x) > 0 {
			*m.to, _ = stats.MeanSD(x)
		}
	}
	var all metrics.Privatization
	for _, rep := range r.Privacy {
		all.Add(rep)
	}
	if all.Tokens > 0 {
		p.oov = all.OOVShare()
		if all.WithVector() > 0 {
			p.unchanged, p.stopwords = all.UnchangedShare(), all.KeptShare()
		}
		if all.Types > 0 {
			p.types = all.TypeUnchangedRate()
		}
	}
	return p
}

// ModeRank orders where a mechanism applies: none, train, test, both.
func ModeRank(m string) int { return slices.Index([]string{"none", "train", "test", "both"}, m) }

// Num formats a number as the tables print it (4 significant digits, ∞,
// — for NaN).
func Num(x float64) string { return fnum(x) }

// Frame is the table as a gota DataFrame (one column per field).
func Frame(rows []Row) dataframe.DataFrame {
	col := func(name string, f func(Row) float64) series.Series {
		v := make([]float64, len(rows))
		for i, r := range rows {
			v[i] = f(r)
		}
		return series.New(v, series.Float, name)
	}
	str := func(name string, f func(Row) string) series.Series {
		v := make([]string, len(rows))
		for i, r := range rows {
			v[i] = f(r)
		}
		return series.New(v, series.String, name)
	}
	ints := func(name string, f func(Row) int) series.Series {
		v := make([]int, len(rows))
		for i, r := range rows {
			v[i] = f(r)
		}
		return series.New(v, series.Int, name)
	}
	return dataframe.New(
		str("setting", func(r Row) string { return r.Setting }),
		str("mode", func(r Row) string { return r.Mode }),
		str("epsilon", func(r Row) string { return epsilon(r.Mode, r.Epsilon) }),
		ints("seeds", func(r Row) int { return r.Seeds }),
		ints("failed", func(r Row) int { return r.Failed }),
		col("accuracy", func(r Row) float64 { return r.Accuracy }),
		col("accuracy_sd", func(r Row) float64 { return r.AccSD }),
		col("accuracy_ci95", func(r Row) float64 { return r.AccCI }),
		col("macro_f1", func(r Row) float64 { return r.MacroF1 }),
		col("macro_f1_sd", func(r Row) float64 { return r.MacroF1SD }),
		col("macro_f1_ci95", func(r Row) float64 { return r.MacroF1CI }),
		col("accuracy_minus_baseline", func(r Row) float64 { return r.Diff }),
		col("accuracy_minus_baseline_ci95", func(r Row) float64 { return r.DiffCI }),
		ints("paired_seeds", func(r Row) int { return r.DiffSeeds }),
		str("notion", func(r Row) string { return string(r.Notion) }),
		col("unchanged_in_vocab", func(r Row) float64 { return r.Unchanged }),
		col("oov", func(r Row) float64 { return r.OOV }),
		col("kept_stopwords", func(r Row) float64 { return r.Stopwords }),
		col("unchanged_per_type", func(r Row) float64 { return r.TypeUnchanged }),
		col("n_w", func(r Row) float64 { return r.Nw }),
		col("s_w", func(r Row) float64 { return r.Sw }),
		col("recovery", func(r Row) float64 { return r.Recovery }),
		col("chance", func(r Row) float64 { return r.Chance }),
		ints("test_n", func(r Row) int { return r.TestN }),
		col("test_set_lo95", func(r Row) float64 { return r.TestLo }),
		col("test_set_hi95", func(r Row) float64 { return r.TestHi }),
		col("paired_p", func(r Row) float64 { return r.VsBaseline.P }),
		col("paired_p_holm", func(r Row) float64 { return r.PHolm }),
		ints("discordant_examples", func(r Row) int { return r.VsBaseline.Discordant }),
		str("flags", func(r Row) string { return strings.Join(r.Flags, "; ") }),
		str("stage", func(r Row) string { return r.Stage }),
		col("epsilon_ci95", func(r Row) float64 { return r.EpsCI }),
		str("model", func(r Row) string { return r.Model }),
		col("valid_accuracy", func(r Row) float64 { return r.ValidAccuracy }),
		str("model_selected", func(r Row) string { return strconv.FormatBool(r.Selected) }),
	)
}

// WriteCSV writes the table as CSV (via gota).
func WriteCSV(w io.Writer, rows []Row) error {
	df := Frame(rows)
	if df.Err != nil {
		return df.Err
	}
	return df.WriteCSV(w)
}

// epsilon is ε as tables print it: empty for the baseline.
func epsilon(mode string, eps float64) string {
	if mode == "none" {
		return ""
	}
	return strconv.FormatFloat(eps, 'g', -1, 64)
}

// rowEpsilon prints a line's ε as the Markdown table and labels show it:
// the grid's value, or a stage's mean ε found over seeds with its 95%
// half-width and the stage's name ("34.71 ± 2.1 (matched-privacy)").
func rowEpsilon(r Row) string {
	if r.Stage == "" {
		return epsilon(r.Mode, r.Epsilon)
	}
	e := fmt.Sprintf("%.4g", r.Epsilon)
	if !math.IsNaN(r.EpsCI) && r.EpsCI > 0 {
		e += fmt.Sprintf(" ± %.2g", r.EpsCI)
	}
	return e + " (" + r.Stage + ")"
}

// Markdown renders the table: accuracy (the attacker's, labelled so, when
// the label is a private attribute) and macro-F1 as mean ± sd over seeds,
// the accuracy's 95% confidence interval, the paired difference to the
// baseline of the same seed with its interval; the share of
// in-vocabulary tokens the mechanism left unchanged, the per-word-type
// unchanged rate and the share of tokens without a vector (passed through
// unprivatized), in percent; the privacy notion ε belongs to; warnings;
// then the chance level and the privacy unit.
func Markdown(rows []Row) string { return UtilityGrid(rows).Markdown() }

// UtilityGrid is the utility table of rows as Markdown prints it (see
// Markdown), with its notes.
func UtilityGrid(rows []Row) Grid {
	var g Grid
	acc := "accuracy"
	if len(rows) > 0 && rows[0].Attacker != "" {
		acc = rows[0].Attacker + " attacker accuracy (lower = more private)"
	}
	measured := slices.ContainsFunc(rows, func(r Row) bool { return !math.IsNaN(r.Nw) || !math.IsNaN(r.Recovery) })
	kept := keeps(rows)
	swept := slices.ContainsFunc(rows, func(r Row) bool { return r.Model != "" })
	for _, c := range []struct {
		name    string
		numeric bool
	}{{"mechanism", false}, {"notion", false}, {"mode", false}, {"ε", true}} {
		g.column(c.name, c.numeric)
	}
	if swept {
		g.column("model", false)
	}
	for _, c := range []struct {
		name    string
		numeric bool
	}{{"seeds", true}, {acc, true}, {"95% CI", true}, {"test-set 95%", true},
		{"Δ vs baseline (paired)", true}, {"p vs baseline (Holm)", true}, {"macro-F1", true}, {"unchanged (in-vocab)", true}, {"unchanged per word type", true}, {"OOV", true}} {
		g.column(c.name, c.numeric)
	}
	if kept {
		g.column("of which kept unguarded", true)
	}
	if measured {
		g.column("N_w", true)
		g.column("S_w", true)
		g.column("token recovery", true)
	}
	g.column("flags", false)
	chance := math.NaN()
	for _, r := range rows {
		eps, notion := cmp.Or(rowEpsilon(r), "—"), "—"
		if r.Mode != "none" {
			notion = cmp.Or(string(r.Notion), "?")
		}
		seeds := strconv.Itoa(r.Seeds)
		if r.Failed > 0 {
			seeds += fmt.Sprintf(" (%d failed)", r.Failed)
		}
		row := []string{r.Setting, notion, r.Mode, eps}
		if swept {
			row = append(row, modelCell(r))
		}
		row = append(row, seeds,
			pm(r.Accuracy, r.AccSD, r.Seeds), interval(r.Accuracy, r.AccCI), testInterval(r), diff(r.Diff, r.DiffCI), pValue(r), pm(r.MacroF1, r.MacroF1SD, r.Seeds),
			percent(r.Unchanged), percent(r.TypeUnchanged), percent(r.OOV))
		if kept {
			row = append(row, percent(r.Stopwords))
		}
		if measured {
			row = append(row, percent(r.Nw), percent(r.Sw), percent(r.Recovery))
		}
		g.Rows = append(g.Rows, append(row, strings.Join(r.Flags, "; ")))
		if math.IsNaN(chance) && !math.IsNaN(r.Chance) {
			chance = r.Chance
		}
	}
	if !math.IsNaN(chance) {
		g.Notes = append(g.Notes, fmt.Sprintf("Chance level (always the evaluated split's most frequent class): %.4f.", chance))
	}
	g.Notes = append(g.Notes, ciNote)
	switch {
	case slices.ContainsFunc(rows, func(r Row) bool { return r.Selected }):
		g.Notes = append(g.Notes, "Model: of the config's model sweep, the point chosen per line by the highest mean validation accuracy over seeds (the validation split carved from the training split; the test split plays no part in the choice), the baseline's likewise; Δ and p compare each line with the baseline's chosen point. tables/sweep.md has every point.")
	case swept:
		g.Notes = append(g.Notes, "Model: the line's point of the config's model sweep; Δ and p compare it with the baseline of the same point.")
	}
	if few := slices.ContainsFunc(rows, func(r Row) bool { return r.Seeds > 0 && r.Seeds < 3 }); few {
		g.Notes = append(g.Notes, "Warning: fewer than 3 seeds on some lines — their t-interval is wide (2 seeds: t(0.975, 1) = 12.7) or absent (1 seed): read the test-set interval and the paired p there.")
	}
	if kept {
		g.Notes = append(g.Notes, keptNote)
	}
	if measured {
		g.Notes = append(g.Notes, measuresNote)
	}
	if slices.ContainsFunc(rows, func(r Row) bool { return r.Mode != "none" }) { // a run of baselines alone privatizes nothing
		g.Notes = append(g.Notes, privacyUnit)
	}
	return g
}

// keeps reports whether a row's mechanism kept tokens by a stopword rule.
func keeps(rows []Row) bool {
	return slices.ContainsFunc(rows, func(r Row) bool { return !math.IsNaN(r.Stopwords) && r.Stopwords > 0 })
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

func percent(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

func pm(m, sd float64, n int) string {
	switch {
	case n == 0 || math.IsNaN(m):
		return "—"
	case n == 1:
		return fmt.Sprintf("%.4f", m)
	}
	return fmt.Sprintf("%.4f ± %.4f", m, sd)
}

// interval prints mean ± half-width as [low, high], within [0, 1] (a
// share's interval; two seeds' t-interval reached −0.27 and 1.51); one of
// zero width — seeds that agree, not an exact value — is not printed.
func interval(m, ci float64) string {
	if math.IsNaN(m) || math.IsNaN(ci) || ci == 0 {
		return "—"
	}
	return fmt.Sprintf("[%.4f, %.4f]", max(0, m-ci), min(1, m+ci))
}

// diff prints a paired difference and its interval, within [−1, 1]; an
// interval of zero width (every seed's difference the same: not an exact
// value) is not printed.
func diff(d, ci float64) string {
	switch {
	case math.IsNaN(d):
		return "—"
	case math.IsNaN(ci) || ci == 0:
		return fmt.Sprintf("%+.4f", d)
	}
	return fmt.Sprintf("%+.4f [%+.4f, %+.4f]", d, max(-1, d-ci), min(1, d+ci))
}

// testInterval prints the test set's Wilson interval.
func testInterval(r Row) string {
	if math.IsNaN(r.TestLo) {
		return "—"
	}
	return fmt.Sprintf("[%.4f, %.4f]", r.TestLo, r.TestHi)
}

// pValue prints the Holm-adjusted paired p against the baseline with the
// discordant examples it rests on.
func pValue(r Row) string {
	if math.IsNaN(r.PHolm) {
		return "—"
	}
	return fmt.Sprintf("%.2g (%d)", r.PHolm, r.VsBaseline.Discordant)
}

// LaTeX renders the table for a paper (booktabs): mechanism, mode, ε,
// accuracy as mean ± 95% half-width (mean alone for one seed), the
// paired difference to the baseline, macro-F1 and the unchanged share
// (with the share kept unguarded beside it where a stopword rule kept any).
func LaTeX(rows []Row) string {
	var b strings.Builder
	acc := "Accuracy"
	if len(rows) > 0 && rows[0].Attacker != "" {
		acc = "Attacker acc. ($\\downarrow$)"
	}
	b.WriteString("% xp results: mean ± 95% CI half-width over seeds (Student's t), [low, high] where that would leave the range; Δ paired with the baseline of each seed.\n")
	kept := keeps(rows)
	swept := slices.ContainsFunc(rows, func(r Row) bool { return r.Model != "" })
	cols, keptHead, modelHead := "lllrrrr", "", ""
	if kept {
		cols, keptHead = cols+"r", " & Kept unguarded"
	}
	if swept {
		cols, modelHead = "l"+cols, " & Model"
	}
	fmt.Fprintf(&b, "\\begin{tabular}{%s}\n\\toprule\n", cols)
	fmt.Fprintf(&b, "Mechanism & Mode & $\\varepsilon$%s & %s & $\\Delta$ vs.\\ baseline & Macro-F1 & Unchanged%s \\\\\n\\midrule\n", modelHead, acc, keptHead)
	for _, r := range rows {
		fmt.Fprintf(&b, "%s & %s & %s", texEscape(r.Setting), r.Mode, cmp.Or(texEscape(rowEpsilon(r)), "--"))
		if swept {
			b.WriteString(" & " + texEscape(r.Model))
		}
		fmt.Fprintf(&b, " & %s & %s & %s & %s",
			texPM(r.Accuracy, r.AccCI, 0, 1), texPM(r.Diff, r.DiffCI, -1, 1), texPM(r.MacroF1, r.MacroF1CI, 0, 1), texPercent(r.Unchanged))
		if kept {
			b.WriteString(" & " + texPercent(r.Stopwords))
		}
		b.WriteString(" \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	return b.String()
}

// texPM prints mean ± half-width, or the interval [low, high] cut to the
// quantity's range [lo, hi] where the half-width would leave it (two
// seeds' macro-F1 read 0.574 ± 1.400); a zero half-width is not printed.
func texPM(m, ci, lo, hi float64) string {
	switch {
	case math.IsNaN(m):
		return "--"
	case math.IsNaN(ci) || ci == 0:
		return fmt.Sprintf("%.3f", m)
	case m-ci < lo || m+ci > hi:
		return fmt.Sprintf("%.3f [%.3f, %.3f]", m, max(lo, m-ci), min(hi, m+ci))
	}
	return fmt.Sprintf("%.3f $\\pm$ %.3f", m, ci)
}

func texPercent(x float64) string {
	if math.IsNaN(x) {
		return "--"
	}
	return fmt.Sprintf("%.1f\\%%", 100*x)
}

var texEscaper = strings.NewReplacer("±", `$\pm$`, "ε", `$\varepsilon$`, "Δ", `$\Delta$`, "—", "---", "−", "$-$", "≤", `$\leq$`, "≥", `$\geq$`, "→", `$\to$`, "×", `$\times$`, "<", `\textless{}`, ">", `\textgreater{}`, `\`, `\textbackslash{}`, "_", `\_`, "%", `\%`, "&", `\&`, "#", `\#`, "$", `\$`, "{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`)

func texEscape(s string) string { return texEscaper.Replace(s) }

// WriteCells writes the long table: one CSV row per utility record, with
// the setting's parameters as columns (param_<name>), every metric, the
// paired difference to the baseline of the same seed, and the model the
// cell evaluated; rows in the summary's order, then by seed.
func WriteCells(w io.Writer, recs []Record, opt TableOptions) error {
	var mine []Record
	params, model := map[string]bool{}, map[string]bool{}
	baseline := map[modelSeed]float64{}
	for _, r := range recs {
		if r.Cell.Analysis != "" {
			continue
		}
		mine = append(mine, r)
		for k := range r.Cell.Params {
			params[k] = true
		}
		for k := range r.Cell.Model {
			model[k] = true
		}
		if r.Cell.Mode == "none" && r.Status == "ok" {
			baseline[modelSeed{r.Cell.ModelPoint(), r.Cell.Seed}] = r.Test.Accuracy
		}
	}
	order := func(r Record) int {
		if r.Cell.Mode == "none" {
			return -1
		}
		if i := slices.Index(opt.Order, r.Cell.Setting()); i >= 0 {
			return i
		}
		return len(opt.Order)
	}
	slices.SortStableFunc(mine, func(a, b Record) int {
		return cmp.Or(cmp.Compare(order(a), order(b)), strings.Compare(a.Cell.Setting(), b.Cell.Setting()), cmp.Compare(ModeRank(a.Cell.Mode), ModeRank(b.Cell.Mode)),
			cmp.Compare(a.Cell.Epsilon, b.Cell.Epsilon), cmp.Compare(a.Cell.Seed, b.Cell.Seed))
	})
	names, swept := slices.Sorted(maps.Keys(params)), slices.Sorted(maps.Keys(model))
	head := []string{"setting", "mechanism"}
	for _, n := range names {
		head = append(head, "param_"+n)
	}
	for _, n := range swept {
		head = append(head, "model_"+n)
	}
	head = append(head, "notion", "mode", "epsilon", "seed", "status", "accuracy", "macro_f1", "accuracy_minus_baseline", "valid_accuracy", "best_epoch",
		"unchanged_in_vocab", "oov", "kept_stopwords", "unchanged_per_type", "n_w", "s_w", "recovery", "test_examples", "model", "model_reused", "wall_seconds", "stage", "key", "error")
	cw := csv.NewWriter(w)
	cw.Write(head)
	f := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	for _, r := range mine {
		row := []string{r.Cell.Setting(), r.Cell.Mechanism}
		for _, n := range names {
			v, ok := r.Cell.Params[n]
			if ok {
				row = append(row, fmt.Sprint(v))
			} else {
				row = append(row, "")
			}
		}
		for _, n := range swept {
			row = append(row, fmt.Sprint(r.Cell.Model[n]))
		}
		p := privacyOf(r)
		ok := r.Status == "ok"
		d := math.NaN()
		if b, has := baseline[modelSeed{r.Cell.ModelPoint(), r.Cell.Seed}]; has && ok && r.Cell.Mode != "none" {
			d = r.Test.Accuracy - b
		}
		score := func(x float64) string {
			if !ok {
				return ""
			}
			return f(x)
		}
		row = append(row, string(r.Notion), r.Cell.Mode, epsilon(r.Cell.Mode, r.Cell.Epsilon), strconv.FormatUint(r.Cell.Seed, 10), r.Status,
			score(r.Test.Accuracy), score(r.Test.MacroF1), f(d), score(r.Valid.Accuracy), strconv.Itoa(r.BestEpoch),
			f(p.unchanged), f(p.oov), f(p.stopwords), f(p.types), f(p.nw), f(p.sw), f(p.recovery), strconv.Itoa(r.Test.N), r.Model, strconv.FormatBool(r.Provenance.ModelReused),
			f(r.Provenance.WallSeconds), opt.FromStage[r.Key], r.Key, r.Error)
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// WriteTables writes, under dir/tables (atomically), the summary as
// results.csv, results.md and results.tex (LaTeX, booktabs), and the
// long per-seed table cells.csv; it returns their paths.
func WriteTables(dir string, rows []Row, recs []Record, opt TableOptions) ([]string, error) {
	td := filepath.Join(dir, "tables")
	if err := os.MkdirAll(td, 0o777); err != nil {
		return nil, err
	}
	var sum, cells strings.Builder
	if err := WriteCSV(&sum, rows); err != nil {
		return nil, fmt.Errorf("results: csv: %w", err)
	}
	if err := WriteCells(&cells, recs, opt); err != nil {
		return nil, fmt.Errorf("results: cells csv: %w", err)
	}
	files := []struct{ name, data string }{{"results.csv", sum.String()}, {"results.md", Markdown(rows)}, {"results.tex", LaTeX(rows)}, {"cells.csv", cells.String()}}
	if opt.Select { // every point of the model sweep beside the lines chosen
		all := opt
		all.Select = false
		sweep := Table(recs, all)
		files = append(files, struct{ name, data string }{"sweep.md", Markdown(sweep)}, struct{ name, data string }{"sweep.tex", LaTeX(sweep)})
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(td, f.name)
		if err := xio.WriteFileAtomic(p, []byte(f.data)); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// Compare renders the utility tables of several runs side by side, one
// line per setting, mode and ε present in any (in the first run's order,
// then the others'): each run's accuracy as mean [95% CI] with its seed
// count, and each later run's difference to the first — over the seeds
// both have where they share any (a seed in one run only would pass for
// a difference: two copies of one baseline cell, one with a seed more,
// read −0.047), marked unpaired where they share none.
func Compare(names []string, tables [][]Row) string { return CompareGrid(names, tables).Markdown() }

// runDiff is line b's accuracy minus a's: averaged over the seeds both
// have, with their count where it is not every seed of both; the means'
// difference, marked unpaired, where they share none.
func runDiff(a, b Row) string {
	_, d := seedDiffs(b, a)
	switch {
	case len(d) == 0:
		return fmt.Sprintf("%+.4f (unpaired)", b.Accuracy-a.Accuracy)
	case len(d) < max(a.Seeds, b.Seeds):
		m, _ := stats.MeanSD(d)
		if len(d) == 1 {
			return fmt.Sprintf("%+.4f (1 seed paired)", m)
		}
		return fmt.Sprintf("%+.4f (%d seeds paired)", m, len(d))
	}
	m, _ := stats.MeanSD(d)
	return fmt.Sprintf("%+.4f", m)
}

// CompareGrid is the side-by-side table of Compare.
func CompareGrid(names []string, tables [][]Row) Grid {
	type key struct {
		setting, mode string
		eps           float64
		stage, model  string
	}
	var keys []key
	at := make([]map[key]Row, len(tables))
	for i, rows := range tables {
		at[i] = map[key]Row{}
		for _, r := range rows {
			k := key{r.Setting, r.Mode, r.Epsilon, r.Stage, r.Model}
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			at[i][k] = r
		}
	}
	var g Grid
	g.column("mechanism", false)
	g.column("mode", false)
	g.column("ε", true)
	for i, n := range names {
		g.column(n+": accuracy (seeds)", true)
		if i > 0 {
			g.column(n+" − "+names[0], true)
		}
	}
	for _, k := range keys {
		row := []string{strings.TrimSpace(k.setting + " " + k.model), k.mode, cmp.Or(rowEpsilon(Row{Mode: k.mode, Epsilon: k.eps, Stage: k.stage, EpsCI: math.NaN()}), "—")}
		first, inFirst := at[0][k]
		for i := range names {
			r, ok := at[i][k]
			switch {
			case !ok || r.Seeds == 0:
				row = append(row, "—")
			case math.IsNaN(r.AccCI) || r.AccCI == 0:
				row = append(row, fmt.Sprintf("%.4f (%d)", r.Accuracy, r.Seeds))
			default:
				row = append(row, fmt.Sprintf("%.4f %s (%d)", r.Accuracy, interval(r.Accuracy, r.AccCI), r.Seeds))
			}
			if i == 0 {
				continue
			}
			if ok && inFirst && r.Seeds > 0 && first.Seeds > 0 {
				row = append(row, runDiff(first, r))
			} else {
				row = append(row, "—")
			}
		}
		g.Rows = append(g.Rows, row)
	}
	return g
}
