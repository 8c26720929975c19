// Package console owns what xp prints on a terminal about a run as it
// happens: a dry run's plan and estimate (DryRun), the end of a run
// (Finished), a run folder's progress and its Slurm jobs (Status), and a
// privatized split beside the original (SplitTSV, Diff).
package console
