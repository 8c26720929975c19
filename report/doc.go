// Package report owns what xp shows people about runs, from their
// folders: the page (HTML, one self-contained file: xp report), the
// reproduction documents regenerated from the paper runs' records
// (PaperDocs: docs/reproduction.md's generated blocks and
// docs/reproduction.html; FillBlocks, the one generator of a Markdown
// document's blocks, for xp results --into too), a run's figures (Plot, PlotAnalysis: PNG, SVG
// and PDF files; Figure.SVG inline on the page) and its tables as
// Markdown — all rendered from results' tables (results.Row,
// results.StatRow, table.Grid).
//
// The page works offline, opened from disk or mailed: styles, the small
// script that sorts tables and every figure are inline (figures as SVG),
// and its content-security policy forbids the browser any request.
package report
