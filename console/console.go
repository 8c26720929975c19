package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/show"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/runner"
	"github.com/xp-nlp/xp/slurm"
	"github.com/xp-nlp/xp/table"
)

// DryRun prints what a run would do: where it reads and writes (absolute
// paths), each cell's status and group, the privatizations and trainings
// to compute, and an estimate of the time they take.
func DryRun(out io.Writer, c *experiments.Config, opt runner.Options, sum runner.Summary) {
	for _, p := range []struct{ what, path string }{{"config", c.File()}, {"output", c.Output}, {"cache", c.Cache}, {"data", c.Data}} {
		if p.path == "" {
			continue
		}
		abs, err := filepath.Abs(p.path)
		if err != nil {
			abs = p.path
		}
		fmt.Fprintf(out, "%-7s %s\n", p.what, abs)
	}
	todo := 0
	for _, cs := range sum.Cells {
		fmt.Fprintf(out, "%-11s %.12s  group %-3d %s\n", cs.Status, cs.Key, cs.Group, cs.Cell)
		if cs.Status == "todo" {
			todo++
		}
	}
	fmt.Fprintf(out, "%d cells in %d groups: %d cached, %d to run", len(sum.Cells), sum.Groups, sum.Reused, todo)
	if opt.Shards > 0 {
		fmt.Fprintf(out, " in shard %d/%d (%d in other shards)", opt.Shard, opt.Shards, len(sum.Cells)-sum.Reused-todo)
	}
	fmt.Fprintln(out)
	if e := sum.Estimate; e != nil {
		fmt.Fprintf(out, "to compute: %d privatized splits (%d tokens), %d models to train (%d training examples over all epochs)\n", e.Privatizations, e.Tokens, e.Trainings, e.Examples)
		if e.Measured > 0 {
			fmt.Fprintf(out, "privacy measures of %d privatized splits: at most %d lookups (word types × draws; fewer where drawn before or exact)\n", e.Measured, e.Lookups)
		}
		if e.Analyses > 0 {
			fmt.Fprintf(out, "%d analysis cells", e.Analyses)
			if e.AnalysisLookups > 0 {
				fmt.Fprintf(out, ": at most %d lookups (sampled words × draws; fewer where drawn before)", e.AnalysisLookups)
			}
			fmt.Fprintln(out)
		}
		if e.Stages > 0 {
			fmt.Fprintf(out, "%d stage results to search", e.Stages)
			if e.StageLookups > 0 {
				fmt.Fprintf(out, ": about %d lookups (their bisections' probes estimated, privatized words or tokens each)", e.StageLookups)
			}
			fmt.Fprintln(out)
		}
		if e.Elsewhere != "" {
			fmt.Fprintln(out, e.Elsewhere)
		}
		switch {
		case e.Privatizations+e.Trainings+e.Measured+e.Analyses+e.Stages == 0:
		case e.Seconds == 0:
			where := "on this host"
			if e.Elsewhere != "" {
				where = "on a GPU"
			}
			fmt.Fprintf(out, "no time estimate: no rate recorded %s for: %s (a finished cell records them in %s)\n", where, strings.Join(e.Unknown, "; "), e.RatesFile)
		case len(e.Unknown) == 0:
			fmt.Fprintf(out, "estimated time: %s (%s), from %s\n", seconds(e.Seconds), fixed(e), e.Basis)
		default:
			fmt.Fprintf(out, "estimated time: at least %s (%s), from %s; no rate recorded yet for: %s\n",
				seconds(e.Seconds), fixed(e), e.Basis, strings.Join(e.Unknown, "; "))
		}
		if len(e.Calibrated) > 0 {
			fmt.Fprintf(out, "measured by this dry run on small samples (%s), no earlier run on this host having recorded them: %s; rough, and on the high side (a sample bears start-up costs a whole split spreads); a finished cell records the real ones\n",
				seconds(e.CalibrationSeconds), strings.Join(e.Calibrated, "; "))
		}
		if e.Borrowed > 0 {
			var pairs []string
			for k, b := range e.BorrowedFrom {
				pairs = append(pairs, k+" at the rate of "+b)
			}
			sort.Strings(pairs)
			fmt.Fprintf(out, "borrowed: %s of it priced at the speed of another mechanism with the same search or of another scoring path, none measured for its own (%s); their speeds were within 1.5× of each other on the CPUs measured (docs/performance.md)\n",
				seconds(e.Borrowed), strings.Join(pairs, "; "))
		}
		if e.RoughCells > 0 && e.Seconds > 0 {
			fmt.Fprintf(out, "rough: %s of it for %d cells priced from other cells' rates (%s); that part can be several times off\n",
				seconds(e.Rough), e.RoughCells, e.RoughWhy)
		}
	}
	fmt.Fprintln(out, "dry run: nothing was run or written")
}

// fixed says what of an estimate the run's fixed costs are.
func fixed(e *runner.Estimate) string {
	s := fmt.Sprintf("%s of it starting and loading the inputs, as this dry run did", seconds(e.Load))
	if e.Outputs >= 0.05 {
		s += fmt.Sprintf(", and %s writing the tables, plots and report", seconds(e.Outputs))
	}
	return s
}

// seconds prints s seconds as a duration: to the second, to the tenth
// below ten seconds.
func seconds(s float64) time.Duration {
	d := time.Duration(s * float64(time.Second))
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// Printable is s as a terminal should show text read from a file: control
// characters (escape sequences that retitle or clear the terminal,
// carriage returns that overwrite a line) and invalid UTF-8 written as Go
// escapes, everything else as it is.
func Printable(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 && r != '\t', r == 0x7f, r >= 0x80 && r < 0xa0:
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Status prints how far the run in dir is: done, failed and missing
// cells (the first 20 of each with their errors), and its Slurm jobs
// still queued or running.
func Status(ctx context.Context, out io.Writer, dir string) error {
	st, err := rundir.ReadState(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s (%s): %d cells in %d groups: %d done, %d failed, %d missing\n",
		dir, Printable(st.Plan.Config.Name), len(st.Cells), st.Plan.Groups, st.Ok, st.Failed, st.Missing)
	problems, err := st.Problems()
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(out, "  warning: %s\n", Printable(p))
	}
	const most = 20 // cells listed per status
	listed := map[string]int{}
	for _, cs := range st.Cells {
		if cs.Status == "ok" {
			continue
		}
		if listed[cs.Status]++; listed[cs.Status] > most {
			continue
		}
		msg, _, _ := strings.Cut(cs.Error, "\n")
		if cs.Status == "missing" && strings.HasPrefix(msg, "no record") {
			msg = "no record yet"
		}
		fmt.Fprintf(out, "  %-8s group %-4d %s: %s\n", cs.Status, cs.Group, Printable(cs.Cell.String()), Printable(msg))
	}
	for _, s := range []string{"failed", "missing"} {
		if listed[s] > most {
			fmt.Fprintf(out, "  … and %d more %s\n", listed[s]-most, s)
		}
	}
	if jobs, err := slurm.ReadJobs(dir); err != nil {
		return err
	} else if len(jobs.Submissions) > 0 {
		last := jobs.Submissions[len(jobs.Submissions)-1]
		fmt.Fprintf(out, "Slurm: %d submission(s); last: array %s (tasks %s of %d), merge %s\n", len(jobs.Submissions), last.Array, slurm.Ranges(last.Shards), jobs.Tasks, last.Merge)
		tasks, err := slurm.Queue(ctx, dir)
		if err != nil {
			fmt.Fprintf(out, "  queue unknown: %v\n", err)
		} else {
			by := map[string][]string{}
			for _, t := range tasks {
				by[t.State] = append(by[t.State], t.ID)
			}
			states := make([]string, 0, len(by))
			for s := range by {
				states = append(states, s)
			}
			sort.Strings(states)
			if len(states) == 0 {
				fmt.Fprintln(out, "  nothing queued or running")
			}
			for _, s := range states {
				fmt.Fprintf(out, "  %-10s %d: %s\n", strings.ToLower(s), len(by[s]), strings.Join(by[s], " "))
			}
		}
	}
	if st.Failed+st.Missing > 0 && st.Ok > 0 {
		fmt.Fprintf(out, "partial: xp results %s shows what is done; run (or xp slurm --submit) again to finish\n", dir)
	}
	return nil
}

// labelName is an example's label as tables name it ("-" unlabelled).
func labelName(labels []string, l int64) string {
	if l >= 0 && int(l) < len(labels) {
		return labels[l]
	}
	return "-"
}

// SplitTSV is a privatized split as xp privatize writes it: one line per
// example (the first limit; 0: all) with its id, label, original tokens
// and privatized tokens (and the second text's, for pairs).
func SplitTSV(p runner.Privatized, labels []string, limit int) []byte {
	sp, orig := p.Split, p.Original
	n := len(sp.Docs)
	if limit > 0 && limit < n {
		n = limit
	}
	var b strings.Builder
	b.WriteString("id\tlabel\toriginal\tprivatized")
	if sp.Docs2 != nil {
		b.WriteString("\toriginal2\tprivatized2")
	}
	b.WriteByte('\n')
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s", sp.IDs[i], labelName(labels, sp.Labels[i]), strings.Join(orig.Docs[i], " "), strings.Join(sp.Docs[i], " "))
		if sp.Docs2 != nil {
			fmt.Fprintf(&b, "\t%s\t%s", strings.Join(orig.Docs2[i], " "), strings.Join(sp.Docs2[i], " "))
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// Diff prints each example's privatized text with every changed
// word marked: [original→privatized], or on a terminal the original in
// red and struck through before the replacement in green.
func Diff(out io.Writer, p runner.Privatized, labels []string, limit int, colour bool) error {
	n := len(p.Docs)
	if limit > 0 && limit < n {
		n = limit
	}
	w := bufio.NewWriter(out)
	mark := func(a, b string) string {
		a, b = show.Terminal(a), show.Terminal(b) // a word's own ESC is no colour of ours
		if colour {
			return "\x1b[9;31m" + a + "\x1b[0m \x1b[1;32m" + b + "\x1b[0m"
		}
		return "[" + a + "→" + b + "]"
	}
	texts := func(orig, priv []string) string {
		words := make([]string, len(priv))
		for j, t := range priv {
			words[j] = t
			if j < len(orig) && orig[j] != t {
				words[j] = mark(orig[j], t)
			}
		}
		return strings.Join(words, " ")
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "%s (%s): %s\n", p.IDs[i], labelName(labels, p.Labels[i]), texts(p.Original.Docs[i], p.Docs[i]))
		if p.Docs2 != nil {
			fmt.Fprintf(w, "    %s\n", texts(p.Original.Docs2[i], p.Docs2[i]))
		}
	}
	return w.Flush()
}

// Finished prints what a run did: its table, the count of cells reused,
// run, trained, failed and without a record, and the files written.
func Finished(out io.Writer, c *experiments.Config, sum runner.Summary) {
	if c.IsAnalysis() {
		fmt.Fprint(out, table.AnalysisMarkdown(sum.Stats))
	} else {
		fmt.Fprint(out, table.Markdown(sum.Rows))
	}
	fmt.Fprintf(out, "\n%d cells: %d reused from %s, %d run (%d models trained), %d failed", len(sum.Cells), sum.Reused, c.Output, sum.Ran, sum.Trained, sum.Failed)
	if sum.Missing > 0 {
		fmt.Fprintf(out, ", %d without a record", sum.Missing)
	}
	fmt.Fprintln(out)
	for _, p := range append(sum.Tables, sum.Plots...) {
		fmt.Fprintln(out, "wrote", p)
	}
}
