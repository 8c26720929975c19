// Package slurm spreads a sweep over a Slurm cluster the way Slurm users
// already work: a preparation job, an array job whose task i runs
// `xp run --shard i/N` on the run folder's resolved config (throttled with
// %K, requeued on preemption), and a dependent merge job that builds the
// tables and plots when the array ends. It owns the batch scripts, their
// submission with sbatch, what was submitted (slurm/jobs.json in the run
// folder) and the queue's view of it (squeue); which cells a shard runs,
// and their records, stay the runner's.
//
// Submitting again submits only the shards that still have a cell without
// a successful record, with the N of the first submission.
package slurm
