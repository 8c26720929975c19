// Package claims owns the founding papers' conclusions as xp tests them:
// the claims file (configs/published.yaml) — the papers, the runs whose
// records decide the claims (each a config, its --set overrides and the
// folder of its records), the claims themselves with the values the papers
// publish —, the rules that decide a claim from records (rules.go), the
// intervals each value carries (estimate.go), the magnitude of xp's
// values beside the published ones (magnitude.go), and the tables that
// show the verdicts (grid.go). It is the one place where a verdict is
// computed: no verdict or interval is typed by hand.
//
// A claim is a conclusion of a paper (kind conclusion) or a property that
// follows from a mechanism's definition (kind sanity: shown apart, never
// counted among the conclusions). Records are read from run folders that
// the repository keeps (records/paper), each checked against the config
// and overrides it is said to come from before any verdict reads it.
package claims
