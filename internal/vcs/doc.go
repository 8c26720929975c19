// Package vcs owns what xp asks of the repository it was built from:
// the commit a binary or a checkout stands at (Stamp), and whether one
// commit lies in the history between two others (Repo.Between), which is
// how committed records are bound to the code that wrote them.
//
// It asks git; where git or the history is missing it says so
// (ErrNoHistory) rather than guessing.
package vcs
