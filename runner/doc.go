// Package runner owns the execution of a sweep: loading the inputs a config
// names once (inputs.go), the one path by which a cell's split is
// privatized, with its verified content-addressed cache (privatize.go:
// Session.Split, also behind `xp privatize`), a cell's run — the
// classifier's vocabulary, the model from models.New, training and
// evaluation (cell.go) —, deciding which cells are already recorded and
// running the rest in this process or in worker processes on the run's
// resolved config (run.go, workers.go), recording each cell atomically,
// and writing the run's manifest, tables and plots (outputs.go). A killed
// run loses at most the cells in flight; the next run redoes exactly
// those and removes what the killed one left half written.
package runner
