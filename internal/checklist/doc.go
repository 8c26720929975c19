// Package checklist holds no code of xp's: its test walks
// docs/extending.md's checklists for a mechanism, an analysis, a stage, a
// classifier and a dataset in a temporary copy of the module, adding a
// throwaway kind of each item by item, so that the lists and the tests
// they name cannot drift apart. It lives in a package of its own so that
// `go test ./...` runs its minutes of compiling beside the other
// packages' tests.
package checklist
