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
)

// Row is one line of the results table: a mechanism setting, mode and ε,
// aggregated over seeds.
type Row struct {
	Setting   string  // "none" for the unprivatized baseline
	Mode      string  // none, train, test, both
	Epsilon   float64 // 0 for the baseline
	Seeds     int     // successful cells aggregated
	Failed    int     // failed cells of this line
	Accuracy  float64 // mean over seeds
	AccSD     float64 // sample standard deviation (0 for one seed)
	MacroF1   float64
	MacroF1SD float64
	// Unchanged is the mean share of privatized tokens left as they were
	// (OOV tokens included), over the privatized splits; NaN when nothing
	// was privatized.
	Unchanged float64
}

// Table aggregates records into rows: the baseline first, then by
// setting, mode and ε.
func Table(recs []Record) []Row {
	type key struct {
		setting, mode string
		eps           float64
	}
	groups := map[key][]Record{}
	for _, r := range recs {
		k := key{r.Cell.Setting(), r.Cell.Mode, r.Cell.Epsilon}
		groups[k] = append(groups[k], r)
	}
	var rows []Row
	for k, rs := range groups {
		row := Row{Setting: k.setting, Mode: k.mode, Epsilon: k.eps, Unchanged: math.NaN()}
		var acc, f1, unch []float64
		for _, r := range rs {
			if r.Status != "ok" {
				row.Failed++
				continue
			}
			acc = append(acc, r.Test.Accuracy)
			f1 = append(f1, r.Test.MacroF1)
			var tok, kept int64
			for _, rep := range r.Privacy {
				tok += rep.Tokens
				kept += rep.Unchanged + rep.OOV
			}
			if tok > 0 {
				unch = append(unch, float64(kept)/float64(tok))
			}
		}
		row.Seeds = len(acc)
		row.Accuracy, row.AccSD = meanSD(acc)
		row.MacroF1, row.MacroF1SD = meanSD(f1)
		if len(unch) > 0 {
			row.Unchanged, _ = meanSD(unch)
		}
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
		col("unchanged", func(r Row) float64 { return r.Unchanged }),
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

// Markdown renders the table: accuracy and macro-F1 as mean ± sd over
// seeds, the unchanged-token share in percent.
func Markdown(rows []Row) string {
	var b strings.Builder
	b.WriteString("| mechanism | mode | ε | seeds | accuracy | macro-F1 | unchanged tokens |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		eps := "—"
		if r.Mode != "none" {
			eps = strconv.FormatFloat(r.Epsilon, 'g', -1, 64)
		}
		seeds := strconv.Itoa(r.Seeds)
		if r.Failed > 0 {
			seeds += fmt.Sprintf(" (%d failed)", r.Failed)
		}
		unch := "—"
		if !math.IsNaN(r.Unchanged) {
			unch = fmt.Sprintf("%.1f%%", 100*r.Unchanged)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Setting, r.Mode, eps, seeds, pm(r.Accuracy, r.AccSD, r.Seeds), pm(r.MacroF1, r.MacroF1SD, r.Seeds), unch)
	}
	return b.String()
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
	if err := os.MkdirAll(td, 0o755); err != nil {
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
