// Package mech owns every random draw that touches privacy: the word-level
// privatization mechanisms (multivariate Laplace, Vickrey, Mahalanobis,
// SanText, CusText and their variants) defined in docs/mechanisms.md, the
// exact nearest-neighbour engine they share, the per-token random streams
// that make privatized corpora reproducible whatever the batching, and the
// privacy measures computed from mechanisms (plausible deniability, Bayesian
// adversary, query attack). ε enters a mechanism here and nowhere else.
package mech
