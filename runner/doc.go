// Package runner owns the execution of a sweep, in three rooms that meet
// only through the plan:
//
//   - Plan (plan.go: runPlan), read-only once made: every cell of the
//     config with its key, group and status, the cells to run, and the
//     analysis cells grouped by mechanism setting and seed — the unit of
//     a searching stage's results, jobs and price — computed once.
//   - Estimate, a dry run's account of the plan: what the caches lack,
//     priced at the rates earlier runs on this host measured (price.go:
//     the estimator and what each kind of work costs; estimate.go: the
//     walk over the plan), measuring those it lacks on small samples
//     (calibrate.go). Rates are named, read and recorded in one place
//     (rates.go: the rate book).
//   - Execute: loading the inputs a config names once (inputs.go, held by
//     the Session), the one path by which a cell's split is privatized,
//     with its verified content-addressed cache (privatize.go: the
//     privatizer, which also builds the mechanisms; Session.Split is
//     behind `xp privatize`), the analysis cells and privacy measures
//     (analyzer.go), a cell's classifier — its vocabulary, the model from
//     models.New, training, caching and evaluation (model.go: the
//     trainer) —, a cell's run (cell.go), running the todo cells in this
//     process or in shards over a shared folder (run.go, launch.go), the
//     stages that combine the cells' records (stage.go: what a stage is;
//     each kind in its own file, stage_*.go, with its jobs and its price
//     side by side; stages.go: the kinds and running them), and writing
//     the run folder's plan, manifest, tables and plots (outputs.go). One
//     function writes a cell's record (Session.record).
//
// A command opens a config's sweep as a Job (job.go: Start) and calls
// the verbs it needs on it — Estimate, Prepare, Execute, Merge — each
// reading the plan; Run chains them as Options ask.
//
// The files stand in layers: each refers only to files below it (the
// ground: lock.go, gobgz.go, rates.go, launch.go, pieces.go; then
// inputs.go; the groups of common noise (groups.go), the draws cache,
// the trainer and the privatizer; the analyzer; the Session; the plan,
// a cell's run and the price; the runner of cells and stages; the
// estimate and the outputs; the stage kinds; stages.go; job.go on top:
// TestFilesLayered).
//
// A run holds its folder's lock (lock.go) and writes only into a folder
// it owns (own.go). A killed run loses at most the cells in flight; the
// next run redoes exactly those and removes what the killed one left half
// written.
package runner
