// Package runner owns the execution of a sweep, in three rooms that meet
// only through the plan:
//
//   - Plan (plan.go: runPlan), read-only once made: every cell of the
//     config with its key, group and status, the cells to run, and the
//     analysis cells grouped by mechanism setting and seed — the unit of
//     a searching stage's results, jobs and price — computed once.
//   - Estimate (estimate.go: estimator), a dry run's account of the plan:
//     what the caches lack, priced at the rates earlier runs on this host
//     measured, measuring those it lacks on small samples (calibrate.go).
//     Rates are named and observed in one place (rates.go).
//   - Execute: loading the inputs a config names once (inputs.go, held by
//     the Session), the one path by which a cell's split is privatized,
//     with its verified content-addressed cache (privatize.go: the
//     privatizer, which also builds the mechanisms; Session.Split is
//     behind `xp privatize`), the analysis cells and privacy measures
//     (cell.go: the analyzer), a cell's classifier — its vocabulary, the
//     model from models.New, training, caching and evaluation (model.go:
//     the trainer) —, running the todo cells in this process or in
//     shards over a shared folder (run.go, launch.go), the stages that
//     combine the cells' records (stages.go; each kind of stage in its
//     own file, stage_*.go, with its jobs and its price side by side),
//     and writing the run's manifest, tables and plots
//     (outputs.go). One function writes a cell's record (Session.record).
//
// A command opens a config's sweep as a Job (job.go: Start) and calls
// the verbs it needs on it — Estimate, Prepare, Execute, Merge — each
// reading the plan; Run chains them as Options ask.
//
// A run holds its folder's lock (lock.go) and writes only into a folder
// it owns (own.go). A killed run loses at most the cells in flight; the
// next run redoes exactly those and removes what the killed one left half
// written.
package runner
