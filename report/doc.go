// Package report owns what xp shows people about a run, from its folder:
// the page (HTML, one self-contained file: xp report) and, rendered from
// the same tables and figures (results.Grid, results.Figure), the
// terminal's reports of xp run, xp results and xp status.
//
// The page works offline, opened from disk or mailed: styles, the small
// script that sorts tables and every figure are inline (figures as SVG),
// and its content-security policy forbids the browser any request.
package report
