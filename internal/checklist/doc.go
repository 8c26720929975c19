// Package checklist holds no code of xp's: its test walks
// docs/extending.md's checklists for a mechanism and an analysis in a
// temporary copy of the module, adding a throwaway kind item by item, so
// that the lists and the tests they name cannot drift apart. It lives in
// a package of its own so that `go test ./...` runs its minutes of
// compiling beside the other packages' tests.
package checklist
