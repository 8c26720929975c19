package claims

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/xp-nlp/xp/stats"
)

// maxSeeds is the most seeds Settle considers: beyond it a difference is
// too small for its spread to be settled by seeds.
const maxSeeds = 200

// Settle is what would settle an unsettled claim whose values are means
// over seeds: for each comparison the claim makes (a value against its
// threshold, or two values paired by seed), the seeds at which its 95%
// interval would exclude the bar four times in five, were the difference
// and spread measured now the truth (stats.SeedsToSettle), and the
// largest of them.
type Settle struct {
	Seeds int // the seeds the hardest comparison needs (> maxSeeds: none will do)
	Now   int // the seeds the records have
	// What names the hardest comparison.
	What string
	// SeedSeconds is the wall time one more seed of each run the claim
	// reads took where its records were written (their cells' wall time,
	// summed, per seed); Runs names them.
	SeedSeconds []float64
	Runs        []string
}

// Text says it in one line, as the tables print it beside the verdict.
func (s Settle) Text() string {
	if s.Seeds > maxSeeds {
		return fmt.Sprintf("more than %d seeds would not settle it 4 times in 5 at the measured difference and spread (%s): the difference is too small for it; a steadier recipe or a larger test set might", maxSeeds, s.What)
	}
	cost := ""
	var total float64
	for _, v := range s.SeedSeconds {
		total += v
	}
	if total > 0 && s.Seeds > s.Now {
		cost = fmt.Sprintf(", about %s of compute where the records were written (%s more × %s a seed)",
			duration(float64(s.Seeds-s.Now)*total), plural(s.Seeds-s.Now, "seed"), duration(total))
	}
	return fmt.Sprintf("about %d seeds would settle it 4 times in 5 at the measured difference and spread (%d now; %s)%s", s.Seeds, s.Now, s.What, cost)
}

func duration(sec float64) string {
	switch {
	case sec < 60:
		return fmt.Sprintf("%.0f s", sec)
	case sec < 3600:
		return fmt.Sprintf("%.0f min", sec/60)
	}
	return fmt.Sprintf("%.1f h", sec/3600)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// toSettle computes Settle for a claim from its groups' values (nil where
// no comparison has per-seed values).
func toSettle(c *Claim, gs []group) *Settle {
	var best *Settle
	consider := func(xs []float64, gap float64, what string) {
		if len(xs) < 2 {
			return
		}
		_, sd, ci := stats.MeanCI(xs)
		if math.IsNaN(ci) || math.Abs(gap) > ci {
			return // settled already (or no spread to read)
		}
		n := stats.SeedsToSettle(gap, sd, maxSeeds)
		if best == nil || n > best.Seeds {
			best = &Settle{Seeds: n, Now: len(xs), What: what}
		}
	}
	values := func(e Estimate) []float64 {
		if len(e.bySeed) == 0 {
			return nil
		}
		var xs []float64
		for _, s := range slices.Sorted(maps.Keys(e.bySeed)) {
			xs = append(xs, e.bySeed[s])
		}
		return xs
	}
	switch c.Rule {
	case "range":
		// Min ε of the grid settle it: the Min-th easiest ε, an ε near the
		// identity not counted (the rule counts it for neither side).
		type need struct {
			n    int
			what string
			now  int
		}
		var needs []need
		held := 0
		for _, g := range gs {
			e := g.values[0]
			if c.Identity > 0 && !math.IsNaN(e.Unchanged) && e.Unchanged >= c.Identity {
				continue
			}
			xs := values(e)
			if len(xs) < 2 {
				continue
			}
			_, sd, ci := stats.MeanCI(xs)
			gap := e.Mean - c.Threshold
			if math.IsNaN(ci) || math.Abs(gap) > ci {
				if gap > 0 {
					held++ // settled on the claimed side
				}
				continue // settled already
			}
			n := stats.SeedsToSettle(gap, sd, maxSeeds)
			needs = append(needs, need{n, fmt.Sprintf("%s against %s", g.points[0], num(c.Threshold)), len(xs)})
		}
		// The open ε that must settle for the verdict to be known: as many
		// as the rule still lacks on the claimed side.
		slices.SortStableFunc(needs, func(a, b need) int { return a.n - b.n })
		if k := max(c.Min-held, 1); len(needs) >= k {
			nd := needs[k-1]
			best = &Settle{Seeds: nd.n, Now: nd.now, What: fmt.Sprintf("%d more ε of the grid settled; the %s open one: %s", k, ordinal(k), nd.what)}
		}
	case "at-least", "at-most":
		for _, g := range gs {
			for i, e := range g.values {
				xs := values(e)
				if len(xs) > 1 {
					consider(xs, e.Mean-c.Threshold, fmt.Sprintf("%s against %s", g.points[i], num(c.Threshold)))
				}
			}
		}
	case "greater", "greatest", "least", "increasing", "decreasing", "dominates":
		// The pairs the rule compares: the first point with each other
		// (greater, greatest, least), or each point with the one before.
		first := c.Rule == "greater" || c.Rule == "greatest" || c.Rule == "least"
		for _, g := range gs {
			for i := 1; i < len(g.values); i++ {
				j := i - 1
				if first {
					j = 0
				}
				x, y := g.values[i], g.values[j]
				var diffs []float64
				for _, s := range slices.Sorted(maps.Keys(x.bySeed)) {
					if w, ok := y.bySeed[s]; ok {
						diffs = append(diffs, x.bySeed[s]-w)
					}
				}
				if len(diffs) > 1 {
					// Settled above the margin, or (with one) within it.
					m, _, _ := stats.MeanCI(diffs)
					gap := math.Abs(math.Abs(m) - c.Margin)
					consider(diffs, gap, fmt.Sprintf("%s vs %s", g.points[j], g.points[i]))
				}
			}
		}
	}
	return best
}

func ordinal(k int) string {
	switch k {
	case 1:
		return "easiest"
	case 2:
		return "second easiest"
	case 3:
		return "third easiest"
	}
	return fmt.Sprintf("%d-th easiest", k)
}
