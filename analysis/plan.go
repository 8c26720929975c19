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

// Plan says what Run would compute for the named analysis with these
// parameters, without computing it: env needs the candidates' vectors
// (Space.Emb), the dataset's counts where the analysis reads them, and
// the seed; not the mechanism.
func Plan(name string, raw map[string]any, env Env) (Work, error) {
	_, v, err := spec.Resolve(spec.Analysis, name, 1, raw)
	if err != nil {
		return Work{}, err
	}
	k, ok := kindOf(name)
	if !ok || k.plan == nil {
		return Work{}, fmt.Errorf("analysis %s has no plan for estimates in package analysis", name)
	}
	return k.plan(v, env)
}
