// Package rundir owns reading a run folder as xp writes it: the plan
// (plan.json: the resolved config and every cell's record key and group),
// the records of its cells (results.Store), the last finished run's
// manifest, each cell's status (ok, failed, missing), and the tables the
// records make. It needs neither libtorch nor the data root, so that
// pages, claims and documents are built from records alone; package
// runner writes what it reads.
package rundir
