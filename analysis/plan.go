package analysis

import (
	"fmt"

	"github.com/xp-nlp/xp/spec"
)

// Work is what an analysis cell computes, as estimates price it: Rows
// (the words whose output distribution it takes, the words it searches,
// or the texts it privatizes) and, where their outputs are sampled, Draws
// per row. A sampled cell's recorded lookups are Rows × Draws (fewer
// where the draws cache held words); an exact one's cost follows Rows.
type Work struct {
	Rows, Draws int
	// Varies, where not empty, says why the cell's cost depends on more
	// than its size (its words' own distributions): a rate measured on
	// other words or at another ε prices it only roughly.
	Varies string
}

// Units is the work in the unit a rate of the same analysis and
// mechanism was measured in: draws where its cells were sampled, rows
// where they were exact.
func (w Work) Units(sampled bool) int64 {
	if sampled {
		return int64(w.Rows) * int64(w.Draws)
	}
	return int64(w.Rows)
}

// plans pick each analysis's rows with the functions the analysis itself
// uses (TestPlanMatchesLookups holds them to the lookups recorded).
var plans = map[string]func(v spec.Values, env Env) (Work, error){
	"neighbours": func(v spec.Values, env Env) (Work, error) {
		return Work{Rows: len(neighbourRows(v, env)), Draws: 1}, nil
	},
	"plausible-deniability": func(v spec.Values, env Env) (Work, error) {
		rows, err := sampleWords(v, env)
		return Work{Rows: len(rows), Draws: v.Int("draws")}, err
	},
	"bayes-adversary": func(v spec.Values, env Env) (Work, error) {
		return Work{Rows: len(topRows(env, v.Int("top"))), Draws: v.Int("samples")}, nil
	},
	"query-attack": func(v spec.Values, env Env) (Work, error) {
		rows, err := rowsOf(v.Strings("list"), env)
		return Work{Rows: len(rows), Draws: v.Int("samples"), Varies: "the vote's cost grows with the queries N each word needs, which its own probability at the cell's ε sets"}, err
	},
	"examples": func(v spec.Values, env Env) (Work, error) {
		rows, err := rowsOf(v.Strings("list"), env)
		return Work{Rows: len(rows), Draws: v.Int("draws")}, err
	},
	"mapping": func(v spec.Values, env Env) (Work, error) {
		return Work{Rows: len(datasetRows(env)), Draws: 1}, nil
	},
	// dp-audit: CusText's cells also take each sampled word's set-mates
	// (known once the mapping is built): more rows than planned.
	"dp-audit": func(v spec.Values, env Env) (Work, error) {
		rows, err := sampleWords(v, env)
		return Work{Rows: len(rows), Draws: v.Int("draws")}, err
	},
	"reconstruction": func(v spec.Values, env Env) (Work, error) {
		return Work{Rows: v.Int("sentences") + v.Int("test"), Draws: 1}, nil
	},
}

// Plan says what Run would compute for the named analysis with these
// parameters, without computing it: env needs the candidates' vectors
// (Space.Emb), the dataset's counts where the analysis reads them, and
// the seed; not the mechanism.
func Plan(name string, raw map[string]any, env Env) (Work, error) {
	_, v, err := spec.Resolve(spec.Analysis, name, 1, raw)
	if err != nil {
		return Work{}, err
	}
	p, ok := plans[name]
	if !ok {
		return Work{}, fmt.Errorf("analysis %s has no plan for estimates in package analysis", name)
	}
	return p(v, env)
}
