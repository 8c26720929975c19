package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xp-nlp/xp/claims"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/table"
)

// PaperGenerator names what writes the reproduction documents, in the
// page's header: nothing that changes from one commit to the next, so
// that the documents are a function of the records alone.
const PaperGenerator = "xp (make paper-tables)"

// PaperDocs regenerates the reproduction documents from the records the
// claims file's runs keep, and nothing else: in the Markdown file md,
// every block "<!-- xp:results DIR -->" (a run folder's tables; a folder
// without records says so, a partial run says how partial) and
// "<!-- xp:agreement FILE -->" (a claims file's tables); and the page
// html — the verdicts first, then one section per run that has records,
// in the claims file's order. Either path may be "" (not written). A
// damaged record, a run whose plan is not what the claims file says, or
// any other generator's failure is an error: the documents are written
// whole or not at all.
func PaperDocs(claimsPath, md, html string, log io.Writer) error {
	f, err := claims.Read(claimsPath)
	if err != nil {
		return err
	}
	as, err := f.Decide()
	if err != nil {
		return err
	}
	var outMD []byte
	if md != "" {
		doc, err := xio.ReadFileMax(md, xio.MaxText)
		if err != nil {
			return err
		}
		var problems []error
		var n int
		page := "reproduction.html" // the page is written beside the document
		if html != "" {
			page = filepath.Base(html)
		}
		outMD, n, problems = FillBlocks(doc, Blocks{Claims: f, ClaimsPath: claimsPath, Agreements: as, Page: page})
		if err := errors.Join(problems...); err != nil {
			return fmt.Errorf("%s: %w", md, err)
		}
		fmt.Fprintf(log, "%s: %d blocks from the records\n", md, n)
	}
	var outHTML []byte
	if html != "" {
		var runs []*Run
		for _, r := range f.Runs {
			dir := f.Dir(r.Name)
			if _, err := os.Stat(filepath.Join(dir, rundir.PlanName)); err != nil {
				continue
			}
			run, err := Read(dir)
			if err != nil {
				return err
			}
			run.Label = r.Name
			runs = append(runs, run)
		}
		var b bytes.Buffer
		opt := Options{Title: "xp: the founding papers reproduced", Paper: true, Agreements: as, Generator: PaperGenerator}
		if err := Write(&b, runs, opt); err != nil {
			return err
		}
		outHTML = b.Bytes()
		fmt.Fprintf(log, "%s: the verdicts and %d runs\n", html, len(runs))
	}
	if md != "" {
		if err := xio.WriteFileAtomic(md, outMD); err != nil {
			return err
		}
	}
	if html != "" {
		return xio.WriteFileAtomic(html, outHTML)
	}
	return nil
}

// runsGrid is the table of the claims file's runs: each one's config and
// overrides, how it is reduced or what it varies, how many of its cells
// have a record, its time in cells and the commits that wrote them.
func runsGrid(f *claims.File) (table.Grid, error) {
	g := table.Grid{Header: []string{"run", "config", "overrides", "reduced or varied", "cells recorded", "time in cells", "written by"}}
	g.Numeric = []bool{4: true, 5: true}
	for _, r := range f.Runs {
		row := []string{r.Name, r.Config, strings.Join(r.Set, " "), cmpOr(r.Reduced, r.Variant, "full size"), "not run here", "", ""}
		dir := f.Dir(r.Name)
		if _, err := os.Stat(filepath.Join(dir, rundir.PlanName)); err != nil {
			// No records: a run that fine-tunes a checkpoint says so.
			if ck := f.Checkpoint(r.Name); ck != "" {
				row[4] = "needs the checkpoint (" + ck + ")"
			}
			g.Rows = append(g.Rows, row)
			continue
		}
		st, err := rundir.ReadState(dir)
		if err != nil {
			return g, err
		}
		recs, err := st.Records()
		if err != nil {
			return g, err
		}
		var secs float64
		var commits []string
		for _, rec := range recs {
			secs += rec.Provenance.WallSeconds
			c := rec.Provenance.Git
			if len(c) > 7 {
				c = c[:7]
			}
			if rec.Provenance.GitDirty {
				c += " (uncommitted changes)"
			}
			if c != "" && !slices.Contains(commits, c) {
				commits = append(commits, c)
			}
		}
		slices.Sort(commits)
		row[4] = fmt.Sprintf("%d of %d", st.Ok, len(st.Cells))
		row[5] = time.Duration(secs * float64(time.Second)).Round(time.Second).String()
		row[6] = strings.Join(commits, ", ")
		g.Rows = append(g.Rows, row)
	}
	g.Notes = []string{"Time in cells is the sum of the cells' recorded wall times on the machines that ran them (the records name each machine); a stage's time is not counted."}
	return g, nil
}

func cmpOr(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// paperRows is the most rows a table of the reproduction document shows,
// and paperItems the most example outputs and notes: a longer table or
// list is named with its size, the command that prints it and a link to
// the run's section of the reproduction page, which shows it whole.
const (
	paperRows  = 24
	paperItems = 40
)

// paperTables are a run's tables as the reproduction document shows
// them (see paperRows): the analysis tables, their examples and notes,
// then the utility table. run is the run's folder as the document's block
// names it, page the run's section of the reproduction page, written
// beside the document.
func paperTables(rows []results.Row, stats []results.StatRow, run, page string) string {
	var b strings.Builder
	grid := func(g table.Grid) {
		if len(g.Rows) <= paperRows {
			b.WriteString(g.Markdown())
			return
		}
		if g.Caption != "" {
			b.WriteString(g.Caption + ": ")
		}
		fmt.Fprintf(&b, "%d rows: on [the reproduction page](%s); `xp results %s` prints them.\n", len(g.Rows), page, run)
	}
	if len(stats) > 0 {
		for i, g := range table.AnalysisGrids(stats) {
			if i > 0 {
				b.WriteString("\n")
			}
			grid(g)
		}
		ex := table.AnalysisExamples(stats)
		n := 0
		for _, e := range ex {
			n += len(e.Items)
		}
		if n > paperItems {
			fmt.Fprintf(&b, "\nExample outputs and notes (%d entries, %d lines): on [the reproduction page](%s); `xp results %s` prints them.\n", len(ex), n, page, run)
		} else {
			for _, e := range ex {
				fmt.Fprintf(&b, "\n%s:\n", e.Heading)
				for _, it := range e.Items {
					fmt.Fprintf(&b, "- %s\n", it)
				}
			}
		}
		if rows != nil {
			b.WriteString("\n")
		}
	}
	if rows != nil {
		grid(table.UtilityGrid(rows))
	}
	return b.String()
}
