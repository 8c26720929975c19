// Package results owns the on-disk record of finished Cells (written
// atomically; the only place a number is written), the statistics over
// them (computed by package stats: the t-interval over seeds, Wilson's
// over a test set, the paired test against the baseline or between
// lines) and the tables rendered from them: accuracy and privacy
// statistics versus ε as CSV, Markdown, LaTeX and the long table. Figures
// are drawn from these tables by package report.
package results
