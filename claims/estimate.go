package claims

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/stats"
)

// Estimate is xp's value at a point, with the 95% interval it carries and
// what that interval is made of (Basis).
type Estimate struct {
	Mean float64
	// Lo and Hi bound the value's 95% interval; NaN when it has none (a
	// sampled value on one seed with no interval of its own).
	Lo, Hi float64
	Seeds  int
	Found  bool
	Basis  string
	// Words and Pool are a worst case's sample: the words it is the worst
	// of, and how many it was drawn from (0: unknown).
	Words, Pool int
	// Unchanged is a utility row's share of in-vocabulary tokens the
	// mechanism left as they were (NaN elsewhere).
	Unchanged float64
	// Note says how a derived value was read (interpolated, pooled).
	Note string
	// bySeed are the values by seed, where the records give them: two
	// estimates on the same seeds are compared pairwise.
	bySeed map[uint64]float64
}

// Bases of an interval.
const (
	BasisSeeds     = "t over seeds"    // Student's t over ≥ 2 seeds
	BasisEqual     = "seeds equal"     // ≥ 2 seeds, all the same value
	BasisExact     = "exact"           // from a known output distribution over the whole population
	BasisDraws     = "draws"           // one seed: the record's interval over its Monte-Carlo draws
	BasisSample    = "sampled words"   // one seed: order statistics of a seeded sample of words
	BasisSimulated = "simulated votes" // one seed: the range simulated votes leave open (query attack's N)
	BasisBracket   = "search bracket"  // a value a bisection stopped at: the bracket it left
	BasisWorst     = "worst word"      // the extreme over every sampled word of every seed, with its draws' interval
	BasisInterp    = "grid bracket"    // interpolated between the two grid points that bracket the match
	BasisOneSeed   = "one seed, no interval"
)

func missing() Estimate {
	return Estimate{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Unchanged: math.NaN()}
}

// known reports whether the estimate has an interval.
func (e Estimate) known() bool { return !math.IsNaN(e.Lo) && !math.IsNaN(e.Hi) }

func (e Estimate) scale(u float64) Estimate {
	e.Mean, e.Lo, e.Hi = e.Mean*u, e.Lo*u, e.Hi*u
	if u < 0 {
		e.Lo, e.Hi = e.Hi, e.Lo
	}
	if e.bySeed != nil {
		m := make(map[uint64]float64, len(e.bySeed))
		for s, v := range e.bySeed {
			m[s] = v * u
		}
		e.bySeed = m
	}
	return e
}

// tables are one run's utility and analysis rows.
type tables struct {
	rows  []results.Row
	stats []results.StatRow
	// seedSeconds is the wall time of one seed of the run where its
	// records were written: its cells' wall times summed by seed, the
	// mean over seeds (0 unknown).
	seedSeconds float64
}

// lookup reads a point's statistic from a run's tables (see Point).
func (t tables) lookup(p Point, stat string) Estimate {
	switch {
	case p.Match != nil:
		return t.matched(p, stat)
	case p.Epsilons != nil:
		return t.pooled(p, stat)
	}
	return t.at(p, stat, p.Epsilon)
}

// at is the statistic of the row of p's setting, mode or analysis at ε.
func (t tables) at(p Point, stat string, eps float64) Estimate {
	if p.Mode != "" {
		for _, r := range t.rows {
			if r.Setting == p.Setting && r.Mode == p.Mode && r.Epsilon == eps && r.Seeds > 0 {
				return utility(r, stat)
			}
		}
		return missing()
	}
	for _, r := range t.stats {
		if r.Analysis == p.Analysis && r.Setting == p.Setting && r.Epsilon == eps && r.Seeds > 0 {
			return analysisValue(r, stat)
		}
	}
	return missing()
}

// utility is a utility row's statistic: accuracy, macro-F1, Δ accuracy
// (paired against the baseline of the same seed), accuracy loss (its
// negation: Xu et al.'s utility loss L_M), Δ accuracy relative to
// chance (results.RelativeDiff), unchanged (share of in-vocabulary
// tokens), or epsilon.
func utility(r results.Row, stat string) Estimate {
	e := Estimate{Seeds: r.Seeds, Found: true, Unchanged: r.Unchanged, bySeed: r.BySeed[stat]}
	var m, ci float64
	switch stat {
	case "accuracy":
		m, ci = r.Accuracy, r.AccCI
	case "macro-F1":
		m, ci = r.MacroF1, r.MacroF1CI
	case "Δ accuracy":
		m, ci = r.Diff, r.DiffCI
		e.Seeds = r.DiffSeeds
	case "accuracy loss":
		m, ci = -r.Diff, r.DiffCI
		e.Seeds = r.DiffSeeds
		e.bySeed = map[uint64]float64{}
		for s, v := range r.BySeed["Δ accuracy"] {
			e.bySeed[s] = -v
		}
	case "unchanged":
		m, ci = r.Unchanged, r.UnchangedCI
	case "epsilon":
		return Estimate{Mean: r.Epsilon, Lo: r.Epsilon, Hi: r.Epsilon, Seeds: r.Seeds, Found: true, Basis: BasisExact, Unchanged: r.Unchanged}
	case results.RelativeDiff:
		vals := slices.Collect(maps.Values(e.bySeed))
		if len(vals) == 0 {
			return missing()
		}
		slices.Sort(vals) // summation order independent of map order
		m, _, ci = stats.MeanCI(vals)
		e.Seeds = len(vals)
	default:
		return missing()
	}
	if math.IsNaN(m) {
		return missing()
	}
	return e.withT(m, ci)
}

// withT sets the mean and its t-interval over seeds.
func (e Estimate) withT(m, ci float64) Estimate {
	e.Mean = m
	switch {
	case e.Seeds < 2 || math.IsNaN(ci):
		e.Lo, e.Hi, e.Basis = math.NaN(), math.NaN(), BasisOneSeed
	case ci == 0:
		e.Lo, e.Hi, e.Basis = m, m, BasisEqual
	default:
		e.Lo, e.Hi, e.Basis = m-ci, m+ci, BasisSeeds
	}
	return e
}

// worstStats are the worst cases over words an analysis summarizes, by
// the per-word series they are the extreme of.
var worstStats = map[string]struct {
	series string
	max    bool
}{"N_w max": {"N_w", true}, "S_w min": {"S_w", false}}

// drawsPerWord is the draws each word had in a sampled analysis
// ("sampled (1000 draws per word)"), or 0.
func drawsPerWord(method string) int {
	i := strings.Index(method, " draws per word")
	if i < 0 {
		return 0
	}
	j := strings.LastIndexAny(method[:i], "( ")
	n, err := strconv.Atoi(method[j+1 : i])
	if err != nil {
		return 0
	}
	return n
}

// countInterval is the 95% interval of the expectation of a count x seen
// in d draws: for N_w (times the word came back unchanged) Wilson's
// binomial interval; for S_w (distinct outputs) x ± 1.96·√x, since the
// occupancy indicators are negatively associated and the count's variance
// is at most its mean. Both stay within [0, d].
func countInterval(series string, x float64, d int) (lo, hi float64) {
	if series == "N_w" {
		lo, hi := stats.Wilson(x/float64(d), d)
		return lo * float64(d), hi * float64(d)
	}
	const z = 1.959963984540054
	half := z * math.Sqrt(x)
	return max(0, x-half), min(float64(d), x+half)
}

// analysisValue is an analysis row's statistic (see Basis for its
// interval), or epsilon.
func analysisValue(r results.StatRow, stat string) Estimate {
	e := Estimate{Seeds: r.Seeds, Found: true, Unchanged: math.NaN()}
	if stat == "epsilon" {
		e.Mean, e.Lo, e.Hi, e.Basis = r.Epsilon, r.Epsilon, r.Epsilon, BasisExact
		return e
	}
	if w, ok := worstStats[stat]; ok && len(r.Series[w.series]) > 0 {
		// A worst case is the extreme over every word of every seed (each
		// seed samples its own words): not a mean of per-seed extremes.
		xs := r.Series[w.series]
		x := slices.Min(xs)
		if w.max {
			x = slices.Max(xs)
		}
		e.Mean, e.Lo, e.Hi, e.Basis, e.Words = x, x, x, BasisWorst, len(xs)
		if d := drawsPerWord(r.Method); d > 0 {
			// The worst word's count is itself a count over d draws:
			// its expectation is known to its draws' interval only.
			e.Lo, e.Hi = countInterval(w.series, x, d)
		}
		return e
	}
	i := slices.Index(r.Names, stat)
	if i < 0 {
		return missing()
	}
	e.bySeed = r.BySeed[stat]
	m, ci := r.Mean[i], r.CI[i]
	exact := strings.HasPrefix(r.Method, "exact")
	iv, recorded := r.Interval[stat]
	switch {
	case r.Bracket[stat] != [2]float64{}:
		// A search's result: the t-interval over seeds (if any), widened
		// to the brackets the searches left open.
		b := r.Bracket[stat]
		e = e.withT(m, ci)
		e.Lo, e.Hi, e.Basis = b[0], b[1], BasisBracket
		if r.Seeds > 1 && !math.IsNaN(ci) {
			e.Lo, e.Hi = min(b[0], m-ci), max(b[1], m+ci)
		}
		return e
	case r.Seeds == 1 && recorded:
		e.Mean, e.Lo, e.Hi = m, iv[0], iv[1]
		switch {
		case exact:
			e.Basis = BasisSimulated
		case strings.HasPrefix(r.Method, "sampled words"):
			e.Basis = BasisSample
		default:
			e.Basis = BasisDraws
		}
		return e
	case exact && (r.Seeds == 1 || ci == 0):
		e.Mean, e.Lo, e.Hi, e.Basis = m, m, m, BasisExact
		return e
	}
	return e.withT(m, ci)
}

// pooled is the mean of the statistic over the point's ε, per seed and
// then over the seeds that have every ε (exact values on one seed stay
// exact).
func (t tables) pooled(p Point, stat string) Estimate {
	var parts []Estimate
	for _, eps := range p.Epsilons {
		e := t.at(p, stat, eps)
		if !e.Found {
			return missing()
		}
		parts = append(parts, e)
	}
	perSeed := map[uint64]float64{}
	for s := range parts[0].bySeed {
		sum, ok := 0.0, true
		for _, e := range parts {
			v, in := e.bySeed[s]
			ok = ok && in
			sum += v
		}
		if ok {
			perSeed[s] = sum / float64(len(parts))
		}
	}
	if len(perSeed) == 0 { // no values by seed: the exact means
		sum, exact := 0.0, true
		for _, e := range parts {
			sum += e.Mean
			exact = exact && e.Basis == BasisExact
		}
		out := missing()
		out.Found, out.Seeds, out.Mean = true, parts[0].Seeds, sum/float64(len(parts))
		if exact {
			out.Lo, out.Hi, out.Basis = out.Mean, out.Mean, BasisExact
		}
		return out
	}
	xs := make([]float64, 0, len(perSeed))
	for _, s := range slices.Sorted(maps.Keys(perSeed)) {
		xs = append(xs, perSeed[s])
	}
	m, _, ci := stats.MeanCI(xs)
	e := Estimate{Seeds: len(xs), Found: true, Unchanged: math.NaN(), bySeed: perSeed}.withT(m, ci)
	if e.Seeds == 1 && slices.IndexFunc(parts, func(e Estimate) bool { return e.Basis != BasisExact }) < 0 {
		e.Lo, e.Hi, e.Basis = m, m, BasisExact
	}
	e.Note = fmt.Sprintf("mean over %d ε", len(parts))
	return e
}

// matched reads the statistic where the match statistic reaches its
// value: between the two grid ε whose means bracket it, interpolated in
// the match statistic (on a log scale where both values are positive).
// Its interval spans the two bracketing values and their own intervals:
// the statistic at the matched point lies between them wherever it is
// monotone between the two ε.
func (t tables) matched(p Point, stat string) Estimate {
	var grid []float64
	if p.Mode != "" {
		for _, r := range t.rows {
			if r.Setting == p.Setting && r.Mode == p.Mode && r.Seeds > 0 {
				grid = append(grid, r.Epsilon)
			}
		}
	} else {
		for _, r := range t.stats {
			if r.Analysis == p.Analysis && r.Setting == p.Setting && r.Seeds > 0 {
				grid = append(grid, r.Epsilon)
			}
		}
	}
	slices.Sort(grid)
	grid = slices.Compact(grid)
	for i := 1; i < len(grid); i++ {
		ma, mb := t.at(p, p.Match.Stat, grid[i-1]), t.at(p, p.Match.Stat, grid[i])
		if !ma.Found || !mb.Found || !brackets(ma.Mean, mb.Mean, p.Match.Value) || ma.Mean == mb.Mean {
			continue
		}
		a, b := t.at(p, stat, grid[i-1]), t.at(p, stat, grid[i])
		if !a.Found || !b.Found {
			return missing()
		}
		f := (p.Match.Value - ma.Mean) / (mb.Mean - ma.Mean)
		v := a.Mean + f*(b.Mean-a.Mean)
		if a.Mean > 0 && b.Mean > 0 && !math.IsInf(a.Mean, 0) && !math.IsInf(b.Mean, 0) {
			v = math.Exp(math.Log(a.Mean) + f*(math.Log(b.Mean)-math.Log(a.Mean)))
		}
		lo, hi := min(a.Mean, b.Mean), max(a.Mean, b.Mean)
		if a.known() && b.known() {
			lo, hi = min(lo, a.Lo, b.Lo), max(hi, a.Hi, b.Hi)
		}
		return Estimate{Mean: v, Lo: lo, Hi: hi, Seeds: min(a.Seeds, b.Seeds), Found: true, Basis: BasisInterp, Unchanged: math.NaN(),
			Note: fmt.Sprintf("interpolated between ε %s and %s", num(grid[i-1]), num(grid[i]))}
	}
	e := missing()
	e.Note = fmt.Sprintf("%s never reaches %s on the grid", p.Match.Stat, num(p.Match.Value))
	return e
}

// text is the estimate as a table prints it.
func (e Estimate) text() string {
	if !e.Found {
		return "—"
	}
	seeds := fmt.Sprintf("%d seeds", e.Seeds)
	if e.Seeds == 1 {
		seeds = "1 seed"
	}
	iv := ""
	if e.known() && (e.Lo != e.Mean || e.Hi != e.Mean) {
		iv = fmt.Sprintf(" [%s, %s]", num(e.Lo), num(e.Hi))
	}
	var how string
	switch e.Basis {
	case BasisWorst:
		how = fmt.Sprintf("worst of %d words over %s", e.Words, seeds)
	case BasisExact:
		how = "exact, " + seeds
	case BasisEqual:
		how = "all " + seeds + " equal"
	case BasisOneSeed:
		how = "1 seed, no interval"
	default:
		how = e.Basis + ", " + seeds
	}
	if e.Note != "" {
		how += "; " + e.Note
	}
	return num(e.Mean) + iv + " (" + how + ")"
}
