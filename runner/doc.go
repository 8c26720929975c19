// Package runner owns the execution of a sweep: loading the inputs a config
// names once, deciding which cells are already recorded, running the rest
// (privatization through a content-addressed corpus cache, training,
// evaluation) in this process or in worker processes (one shard each),
// recording each cell atomically, and writing the run's manifest, tables
// and plots. A killed run loses at most the cells in flight; the next run
// redoes exactly those.
package runner
