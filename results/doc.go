// Package results owns the on-disk record of finished Cells (written
// atomically; the only place a number is written), the statistics over
// them (mean, sd and the one Student-t interval over seeds, Wilson and
// McNemar over a test set) and the tables rendered from them: accuracy
// and privacy statistics versus ε as CSV, Markdown, LaTeX and the long
// table. Figures are drawn from these tables by package report.
package results
