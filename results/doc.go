// Package results owns the on-disk record of finished Cells (written
// atomically; the only place a number is written) and the statistics
// over them (computed by package stats): records aggregated into the
// rows of the utility table (Table: the t-interval over seeds, Wilson's
// over a test set, the paired test against the baseline) and of the
// analysis table (AnalysisTable), and lines tested against each other
// (Pairs). How those rows are printed — columns, Markdown, LaTeX, CSV —
// is package table's; figures are package report's.
package results
