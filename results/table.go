package results

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-gota/gota/dataframe"
	"github.com/go-gota/gota/series"
	"gonum.org/v1/gonum/stat"

	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// Row is one line of the results table: a mechanism setting, mode and ε,
// aggregated over seeds.
type Row struct {
	Setting   string      // "none" for the unprivatized baseline
	Notion    spec.Notion // the mechanism's privacy notion ("" for the baseline)
	Mode      string      // none, train, test, both
	Epsilon   float64     // 0 for the baseline
	Seeds     int         // successful cells aggregated
	Failed    int         // failed cells of this line
	Accuracy  float64     // mean over seeds
	AccSD     float64     // sample standard deviation (0 for one seed)
	MacroF1   float64
	MacroF1SD float64
	// Unchanged is the mean share of in-vocabulary tokens the mechanism
	// left as they were, over the cell's privatized splits; OOV the mean
	// share of tokens without a vector, passed through unprivatized;
	// Stopwords the mean share kept by a stopword rule. NaN when nothing
	// was privatized.
	Unchanged, OOV, Stopwords float64
	// TypeUnchanged is the mean per-word-type unchanged rate (see
	// metrics.Privatization.TypeUnchangedRate; NaN when not measured).
	TypeUnchanged float64
	// Chance is the share of the evaluated split's most frequent class:
	// the accuracy of always guessing it.
	Chance float64
	// Attacker names what the classifier attacks when the label is a
	// private attribute (Enron: "authorship"); its accuracy is then the
	// attacker's, lower being more private.
	Attacker string
	// Flags are the warnings of the line's cells (see metrics.Flags).
	Flags []string
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
}

// Table aggregates records into rows: the baseline first, then by
// setting, mode and ε.
func Table(recs []Record, opt TableOptions) []Row {
	type key struct {
		setting, mode string
		eps           float64
	}
	groups := map[key][]Record{}
	for _, r := range recs {
		if r.Cell.Analysis != "" {
			continue // analyses and stages have their own table
		}
		k := key{r.Cell.Setting(), r.Cell.Mode, r.Cell.Epsilon}
		groups[k] = append(groups[k], r)
	}
	var rows []Row
	for k, rs := range groups {
		row := Row{Setting: k.setting, Mode: k.mode, Epsilon: k.eps, Unchanged: math.NaN(), OOV: math.NaN(), Stopwords: math.NaN(), Attacker: opt.Attacker}
		var acc, f1, unch, oov, stop, types, chance []float64
		for _, r := range rs {
			row.Notion = cmp.Or(row.Notion, r.Notion)
			if r.Status != "ok" {
				row.Failed++
				continue
			}
			acc = append(acc, r.Test.Accuracy)
			f1 = append(f1, r.Test.MacroF1)
			if r.Test.N > 0 {
				most := 0
				for _, c := range r.Test.PerClass {
					most = max(most, c.Support)
				}
				chance = append(chance, float64(most)/float64(r.Test.N))
			}
			var all metrics.Privatization
			for _, rep := range r.Privacy {
				all.Add(rep)
			}
			if all.Tokens > 0 {
				oov = append(oov, all.OOVShare())
				stop = append(stop, float64(all.Stopwords)/float64(all.Tokens))
				if all.InVocab() > 0 {
					unch = append(unch, all.UnchangedShare())
				}
				if all.Types > 0 {
					types = append(types, all.TypeUnchangedRate())
				}
			}
			for _, f := range metrics.Flags(r.Privacy, opt.MaxOOV) {
				if !slices.Contains(row.Flags, f.Short()) {
					row.Flags = append(row.Flags, f.Short())
				}
			}
		}
		row.Seeds = len(acc)
		row.Accuracy, row.AccSD = meanSD(acc)
		row.MacroF1, row.MacroF1SD = meanSD(f1)
		row.Unchanged, _ = meanSD(unch)
		row.OOV, _ = meanSD(oov)
		row.Stopwords, _ = meanSD(stop)
		row.TypeUnchanged, _ = meanSD(types)
		row.Chance, _ = meanSD(chance)
		slices.Sort(row.Flags)
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b Row) int {
		base := func(r Row) int {
			if r.Mode == "none" {
				return 0
			}
			return 1
		}
		return cmp.Or(cmp.Compare(base(a), base(b)), strings.Compare(a.Setting, b.Setting),
			cmp.Compare(modeRank(a.Mode), modeRank(b.Mode)), cmp.Compare(a.Epsilon, b.Epsilon))
	})
	return rows
}

func modeRank(m string) int { return slices.Index([]string{"none", "train", "test", "both"}, m) }

func meanSD(x []float64) (float64, float64) {
	switch len(x) {
	case 0:
		return math.NaN(), math.NaN()
	case 1:
		return x[0], 0
	}
	return stat.MeanStdDev(x, nil)
}

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
		col("epsilon", func(r Row) float64 { return r.Epsilon }),
		ints("seeds", func(r Row) int { return r.Seeds }),
		ints("failed", func(r Row) int { return r.Failed }),
		col("accuracy", func(r Row) float64 { return r.Accuracy }),
		col("accuracy_sd", func(r Row) float64 { return r.AccSD }),
		col("macro_f1", func(r Row) float64 { return r.MacroF1 }),
		col("macro_f1_sd", func(r Row) float64 { return r.MacroF1SD }),
		str("notion", func(r Row) string { return string(r.Notion) }),
		col("unchanged_in_vocab", func(r Row) float64 { return r.Unchanged }),
		col("oov", func(r Row) float64 { return r.OOV }),
		col("kept_stopwords", func(r Row) float64 { return r.Stopwords }),
		col("unchanged_per_type", func(r Row) float64 { return r.TypeUnchanged }),
		col("chance", func(r Row) float64 { return r.Chance }),
		str("flags", func(r Row) string { return strings.Join(r.Flags, "; ") }),
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

// Markdown renders the table: accuracy (the attacker's, labelled so, when
// the label is a private attribute) and macro-F1 as mean ± sd over seeds;
// the share of in-vocabulary tokens the mechanism left unchanged, the
// per-word-type unchanged rate and the share of tokens without a vector
// (passed through unprivatized), in percent; the privacy notion ε belongs
// to; warnings; then the chance level and the privacy unit.
func Markdown(rows []Row) string {
	var b strings.Builder
	acc := "accuracy"
	if len(rows) > 0 && rows[0].Attacker != "" {
		acc = rows[0].Attacker + " attacker accuracy (lower = more private)"
	}
	b.WriteString("| mechanism | notion | mode | ε | seeds | " + acc + " | macro-F1 | unchanged (in-vocab) | unchanged per word type | OOV | flags |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
	chance := math.NaN()
	for _, r := range rows {
		eps, notion := "—", "—"
		if r.Mode != "none" {
			eps = strconv.FormatFloat(r.Epsilon, 'g', -1, 64)
			notion = cmp.Or(string(r.Notion), "?")
		}
		seeds := strconv.Itoa(r.Seeds)
		if r.Failed > 0 {
			seeds += fmt.Sprintf(" (%d failed)", r.Failed)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Setting, notion, r.Mode, eps, seeds,
			pm(r.Accuracy, r.AccSD, r.Seeds), pm(r.MacroF1, r.MacroF1SD, r.Seeds), percent(r.Unchanged), percent(r.TypeUnchanged), percent(r.OOV), strings.Join(r.Flags, "; "))
		if math.IsNaN(chance) && !math.IsNaN(r.Chance) {
			chance = r.Chance
		}
	}
	if !math.IsNaN(chance) {
		fmt.Fprintf(&b, "\nChance level (always the evaluated split's most frequent class): %.4f.\n", chance)
	}
	b.WriteString("\nPrivacy unit: ε is per token. For metric DP (ε·d_χ) a text of n tokens is ε·Σ d(w_i, w′_i)-private against a change of its words, so the guarantee weakens with length and distance; SanText's pure ε-DP and CusText's ε-DP within an output set compose to n·ε over a text. In mode both, training and test text are privatized independently: a text in both is exposed twice.\n")
	return b.String()
}

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

// WriteTables writes results.csv and results.md under dir/tables
// (atomically) and returns their paths.
func WriteTables(dir string, rows []Row) ([]string, error) {
	td := filepath.Join(dir, "tables")
	if err := os.MkdirAll(td, 0o777); err != nil {
		return nil, err
	}
	var csv strings.Builder
	if err := WriteCSV(&csv, rows); err != nil {
		return nil, fmt.Errorf("results: csv: %w", err)
	}
	paths := []string{filepath.Join(td, "results.csv"), filepath.Join(td, "results.md")}
	for i, data := range []string{csv.String(), Markdown(rows)} {
		if err := xio.WriteFileAtomic(paths[i], []byte(data)); err != nil {
			return nil, err
		}
	}
	return paths, nil
}
