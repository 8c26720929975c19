// Package runner owns the execution of a sweep: loading the inputs a config
// names once (inputs.go), the one path by which a cell's split is
// privatized, with its verified content-addressed cache (privatize.go:
// Session.Split, also behind `xp privatize`), a cell's run — the
// classifier's vocabulary, the model from models.New, training and
// evaluation (cell.go, model.go) —, deciding which cells are already
// recorded (plan.go) and running the rest in this process or in shards
// over a shared folder (run.go, launch.go), the stages that combine the
// cells' records (stages.go, one file per kind of stage: its jobs and its
// price), recording each cell atomically, and writing
// the run's manifest, tables and plots (outputs.go). A dry run prices the
// work from the rates earlier runs recorded, measuring those it lacks
// on small samples (estimate.go, calibrate.go). A run holds its folder's
// lock (lock.go) and writes only into a folder it owns (own.go). A killed
// run loses at most the cells in flight; the next run redoes exactly
// those and removes what the killed one left half written.
package runner
