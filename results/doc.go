// Package results owns the on-disk record of finished Cells (written
// atomically; the only place a number is written) and everything rendered
// from it: tables of accuracy and privacy statistics versus ε (CSV and
// Markdown, mean ± sd over seeds) and plots.
package results
