// Package runner owns the execution of a sweep: it takes the Cells of an
// experiment, skips those already recorded, schedules the rest over workers
// and devices, caches privatized corpora and trained-model results by
// content hash, reports progress, records provenance, and survives being
// killed: a rerun redoes only the interrupted Cell. A failing Cell is
// recorded with its error; the sweep goes on.
package runner
