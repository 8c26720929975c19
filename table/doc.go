// Package table owns how xp's tables look: the utility table's columns,
// each defined once by name with its CSV fields, its heading and its cell
// (utility.go), read by every renderer; the analysis, side-by-side and
// paired tables; and their renderers — Markdown for the terminal and
// docs, LaTeX for a paper, CSV (results.csv, cells.csv, long.csv,
// analysis.csv) for R, pandas or a spreadsheet — through one table value,
// Grid, which package report also renders as HTML. It writes a run's
// tables/ folder and fills the generated blocks of a Markdown document
// (Splice). The numbers it prints are package results': the records,
// their aggregation into rows and the statistics over them.
package table
