// Package mech owns every random draw that touches privacy: the
// word-level privatization mechanisms — multivariate Laplace (laplace),
// Vickrey (vickrey), Mahalanobis (mahalanobis), SanText and SanText+
// (santext, santext+), CusText and CusText+ (custext, custext+), TEM
// (tem), 1-Diffractor (diffractor) and the truncated Gumbel mechanism
// (truncated-gumbel) —, the per-token random streams they draw from, and
// the registry through which configs name them: one kind value per
// mechanism, declared in its own file (registry.go says what a kind
// holds; TestPackageDocNamesEveryKind keeps this list whole).
//
// Where ε enters: each mechanism's constructor (New) takes it; noise.go
// draws the noise it scales; knn searches the nearest candidates. The
// exact definitions, and the mistakes of public implementations this
// package avoids, are in docs/mechanisms.md.
package mech
