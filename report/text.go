package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/table"
)

// Incomplete says, on w, what is wrong with the run's record files (one
// warning each: damaged, foreign, stale) and which cells of a partial run have no successful
// record.
func Incomplete(w io.Writer, st *rundir.State) {
	if problems, err := st.Problems(); err == nil {
		for _, p := range problems {
			fmt.Fprintf(w, "warning: %s\n", p)
		}
	}
	if st.Failed+st.Missing == 0 {
		return
	}
	fmt.Fprintf(w, "%s: partial run: %d of %d cells done, %d failed, %d missing (xp status %s lists them)\n",
		st.Dir, st.Ok, len(st.Cells), st.Failed, st.Missing, st.Dir)
}

// Tables are a run's tables as xp results prints them: the analysis
// table, then the utility table.
func Tables(rows []results.Row, stats []results.StatRow) string {
	var b strings.Builder
	if len(stats) > 0 {
		b.WriteString(table.AnalysisMarkdown(stats))
		if rows != nil {
			b.WriteString("\n")
		}
	}
	if rows != nil {
		b.WriteString(table.Markdown(rows))
	}
	return b.String()
}
