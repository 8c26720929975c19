package results

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

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
	baseline := baselines(recs)
	for _, r := range recs {
		if r.Cell.Analysis != "" {
			continue // analyses and stages have their own table
		}
		k := key{r.Cell.Setting(), r.Cell.Mode, r.Cell.Epsilon, "", r.Cell.ModelPoint()}
		if st := opt.FromStage[r.Key]; st != "" {
			k.eps, k.stage = 0, st
		}
		groups[k] = append(groups[k], r)
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
			p := SharesOf(r)
			if !math.IsNaN(p.Unchanged) {
				row.BySeed.set("unchanged", r.Cell.Seed, p.Unchanged)
			}
			for _, v := range []struct {
				x   float64
				all *[]float64
			}{{p.Unchanged, &unch}, {p.OOV, &oov}, {p.Stopwords, &stop}, {p.TypeUnchanged, &types}, {p.Nw, &nw}, {p.Sw, &sw}, {p.Recovery, &rec}} {
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

// Shares are a record's privacy shares over its privatized splits and
// its opt-in measures, NaN where not measured: what a Row averages over
// seeds (see Row's fields of the same names).
type Shares struct{ Unchanged, OOV, Stopwords, TypeUnchanged, Nw, Sw, Recovery float64 }

// SharesOf are the record's privacy shares.
func SharesOf(r Record) Shares {
	p := Shares{math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	for _, m := range []struct {
		stat  string
		to    *float64
		scale float64
	}{{"N_w %", &p.Nw, 100}, {"S_w %", &p.Sw, 100}, {"recovery", &p.Recovery, 1}} {
		var x []float64
		for _, split := range slices.Sorted(maps.Keys(r.Measures)) { // one order: the same bits every time
			a := r.Measures[split]
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
	for _, split := range slices.Sorted(maps.Keys(r.Privacy)) {
		all.Add(r.Privacy[split])
	}
	if all.Tokens > 0 {
		p.OOV = all.OOVShare()
		if all.WithVector() > 0 {
			p.Unchanged, p.Stopwords = all.UnchangedShare(), all.KeptShare()
		}
		if all.Types > 0 {
			p.TypeUnchanged = all.TypeUnchangedRate()
		}
	}
	return p
}

// ModeRank orders where a mechanism applies: none, train, test, both.
func ModeRank(m string) int { return slices.Index([]string{"none", "train", "test", "both"}, m) }

// Num formats a number as the tables print it (4 significant digits, ∞,
// — for NaN).
func Num(x float64) string { return fnum(x) }

// Epsilon is ε as tables print it: empty for the baseline.
func Epsilon(mode string, eps float64) string {
	if mode == "none" {
		return ""
	}
	return strconv.FormatFloat(eps, 'g', -1, 64)
}

// EpsilonText is the line's ε as the tables print it: the grid's value,
// or a stage's mean ε found over seeds with its 95% half-width and the
// stage's name ("34.71 ± 2.1 (matched-privacy)").
func (r Row) EpsilonText() string {
	if r.Stage == "" {
		return Epsilon(r.Mode, r.Epsilon)
	}
	e := fmt.Sprintf("%.4g", r.Epsilon)
	if !math.IsNaN(r.EpsCI) && r.EpsCI > 0 {
		e += fmt.Sprintf(" ± %.2g", r.EpsCI)
	}
	return e + " (" + r.Stage + ")"
}

// baselines are the accuracies of recs' successful baseline records by
// model point and seed.
func baselines(recs []Record) map[modelSeed]float64 {
	out := map[modelSeed]float64{}
	for _, r := range recs {
		if r.Cell.Analysis == "" && r.Cell.Mode == "none" && r.Status == "ok" {
			out[modelSeed{r.Cell.ModelPoint(), r.Cell.Seed}] = r.Test.Accuracy
		}
	}
	return out
}

// BaselineDiff returns, for a successful privatized record of recs, its
// accuracy minus that of the baseline record of the same model point and
// seed in recs: the paired difference Δ, per cell (NaN for a baseline, a
// failed record or one without a baseline).
func BaselineDiff(recs []Record) func(Record) float64 {
	baseline := baselines(recs)
	return func(r Record) float64 {
		if b, ok := baseline[modelSeed{r.Cell.ModelPoint(), r.Cell.Seed}]; ok && r.Status == "ok" && r.Cell.Mode != "none" {
			return r.Test.Accuracy - b
		}
		return math.NaN()
	}
}
