// Package mech owns every random draw that touches privacy: the
// word-level privatization mechanisms (multivariate Laplace, Vickrey,
// Mahalanobis, SanText and SanText+), the per-token random streams they
// draw from, and the registry through which configs name them.
//
// Where ε enters: each mechanism's constructor (New) takes it; noise.go
// draws the noise it scales; knn searches the nearest candidates. The
// exact definitions, and the mistakes of public implementations this
// package avoids, are in docs/mechanisms.md.
package mech
