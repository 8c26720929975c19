package results

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

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

func fnum(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "∞"
	case math.IsNaN(x):
		return "—"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
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
