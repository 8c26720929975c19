package report

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xp-nlp/xp/claims"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/table"
)

//go:embed page.tmpl
var pageTemplate string

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

var page = template.Must(template.New("page").Parse(pageTemplate))

// Options are what a page shows besides its runs.
type Options struct {
	// Title heads the page (default: the runs' config names).
	Title string
	// Agreements are the claims decided on records (package claims):
	// those decided on a run of the page are shown in its section, all of
	// them at the top when Paper is set.
	Agreements []claims.Agreement
	// Paper shows every agreement at the top (the reproduction page).
	Paper bool
	// Generator names what wrote the page (xp's version and commit).
	Generator string
}

// Write writes the page of runs to w: one self-contained HTML document
// (see the package comment). Runs are shown in the order given; several
// are compared side by side first, as xp results A B does. The page
// depends only on the runs' records and files: written twice from the
// same folders it is the same bytes.
func Write(w io.Writer, runs []*Run, opt Options) error {
	v := view{Title: opt.Title, Generator: opt.Generator, CSS: template.CSS(pageCSS), JS: template.JS(pageJS), ScriptHash: scriptHash}
	if v.Title == "" {
		var names []string
		for _, r := range runs {
			names = append(names, r.Name())
		}
		v.Title = "xp report: " + strings.Join(names, ", ")
	}
	var tables [][]results.Row
	var names []string
	for _, r := range runs {
		if r.Rows != nil {
			tables = append(tables, r.Rows)
			names = append(names, r.Name())
		}
	}
	if len(tables) > 1 && !opt.Paper { // the reproduction page's runs are unrelated studies
		v.Compare = gridHTML("compare", table.CompareGrid(names, tables))
	}
	if opt.Paper && len(opt.Agreements) > 0 {
		v.Agreement = agreementHTML("agreement", opt.Agreements)
	}
	for i, r := range runs {
		rv, err := runView(RunID(i, r), r, opt)
		if err != nil {
			return fmt.Errorf("report %s: %w", r.Dir, err)
		}
		v.Runs = append(v.Runs, rv)
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// scriptHash allows the page's one script by its hash (the page's
// content-security policy): no other script runs, inline or injected, so
// that escaping is not the page's only defence.
var scriptHash = func() string {
	h := sha256.Sum256([]byte(pageJS))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}()

// view is the page's content as the template reads it.
type view struct {
	Title, Generator   string
	ScriptHash         string
	CSS                template.CSS
	JS                 template.JS
	Compare, Agreement template.HTML
	Runs               []run
}

type run struct {
	ID, Name, Dir, Status string
	Partial               bool
	Facts                 []fact
	Config                string
	Agreement, Utility    template.HTML
	Figures               []figure
	Analyses              []template.HTML
	AnalysisFigures       []figure
	Examples              []table.Examples
	Undrawn               []string
	Problems              []problem
	MoreProblems          int
	// FileProblems are the run's record files that are no usable record
	// (rundir.State.Problems).
	FileProblems []string
}

type fact struct{ Key, Value string }

type figure struct {
	Caption, Metric string
	SVG             template.HTML
}

type problem struct {
	Status, Cell, Message string
	Group                 int
}

// mostProblems is how many failed or missing cells a run's section lists.
const mostProblems = 50

func runView(id string, r *Run, opt Options) (run, error) {
	st := r.State
	c := st.Plan.Config
	v := run{ID: id, Name: r.Name(), Dir: r.Dir, Partial: st.Failed+st.Missing > 0}
	v.Status = fmt.Sprintf("%d cells: %d done, %d failed, %d without a record", len(st.Cells), st.Ok, st.Failed, st.Missing)
	if st.Manifest == nil {
		v.Status += "; the run has not finished (no manifest)"
	}
	v.Config = string(r.Config)
	var seeds []string
	for _, s := range c.Seeds {
		seeds = append(seeds, strconv.FormatUint(s, 10))
	}
	add := func(k, val string) {
		if val != "" {
			v.Facts = append(v.Facts, fact{k, val})
		}
	}
	add("dataset", c.Dataset.Name)
	add("embedding", c.Embedding.Path)
	add("seeds", strings.Join(seeds, ", "))
	if p := r.Provenance; p != nil {
		add("config file", p.Config)
		add("config sha256", p.ConfigSHA256)
		add("resolved config sha256", p.ResolvedSHA256)
		add("data sha256", p.Inputs.Data)
		add("vectors sha256", p.Inputs.Embedding)
		add("mechanism vectors sha256", p.Inputs.MechEmbedding)
		commit := p.Git
		if p.GitDirty {
			commit += " (with uncommitted changes)"
		}
		add("xp commit", commit)
		add("Go, gotch, libtorch", strings.Join([]string{p.GoVersion, p.Gotch, p.Libtorch}, ", "))
		add("machine", fmt.Sprintf("%s, device %s, %d threads", p.Host, p.Device, p.Threads))
		add("started", p.Started)
	}
	if m := st.Manifest; m != nil {
		add("finished", m.Finished)
	}
	if d := (time.Duration(r.Seconds * float64(time.Second))).Round(time.Second); r.Seconds > 0 && st.Manifest != nil {
		add("wall time", d.String())
	} else if r.Seconds > 0 {
		add("time in cells so far", d.String()+" (the sum of the recorded cells' wall times)")
	}
	var mine []claims.Agreement
	for _, a := range opt.Agreements {
		if slices.ContainsFunc(a.Dirs, func(d string) bool { return d != "" && xio.SamePath(d, r.Dir) }) {
			mine = append(mine, a)
		}
	}
	if len(mine) > 0 {
		v.Agreement = agreementHTML(id+"-agreement", mine)
	}
	if r.Rows != nil {
		v.Utility = gridHTML(id+"-utility", table.UtilityGrid(r.Rows))
		figs, err := utilityFigures(c.Name, r.Rows)
		if err != nil {
			return v, err
		}
		v.Figures = figs
	}
	for i, g := range table.AnalysisGrids(r.Stats) {
		v.Analyses = append(v.Analyses, gridHTML(fmt.Sprintf("%s-analysis%d", id, i+1), g))
	}
	afigs, err := AnalysisFigures(c.Name, r.Stats)
	if err != nil {
		return v, err
	}
	for _, f := range afigs {
		fv, err := figureView(f, f.Name, "")
		if err != nil {
			return v, err
		}
		v.AnalysisFigures = append(v.AnalysisFigures, fv)
	}
	v.Examples = table.AnalysisExamples(r.Stats)
	v.Undrawn = Undrawn(r.Stats)
	for _, cs := range append(slices.Clone(st.Cells), st.Stages...) {
		if cs.Status == "ok" || cs.Status == "" {
			continue
		}
		if len(v.Problems) == mostProblems {
			v.MoreProblems++
			continue
		}
		msg := cs.Error
		if cs.Status == "missing" && strings.HasPrefix(msg, "no record") {
			msg = "no record yet (run again to run it)"
		}
		v.Problems = append(v.Problems, problem{Status: cs.Status, Cell: cs.Cell.String(), Group: cs.Group, Message: msg})
	}
	if v.FileProblems, err = st.Problems(); err != nil {
		return v, err
	}
	return v, nil
}

// utilityFigures are the utility figures of the page: accuracy and
// macro-F1 against ε (one shown at a time), the privacy shares against
// ε, and each utility metric against every privacy statistic the run
// has (the privacy–utility frontier).
func utilityFigures(title string, rows []results.Row) ([]figure, error) {
	if !slices.ContainsFunc(rows, func(r results.Row) bool { return r.Mode != "none" && r.Seeds > 0 }) {
		return nil, nil // the baseline alone: nothing against ε
	}
	// The default figures are accuracy and privacy; macro-F1 goes between
	// them (the switch shows one metric in one place).
	figs, err := UtilityFigures(title, rows, PlotOptions{})
	if err != nil {
		return nil, err
	}
	f1, err := UtilityFigures(title, rows, PlotOptions{Metric: "macro-f1"})
	if err != nil {
		return nil, err
	}
	figs = slices.Insert(figs, 1, f1...)
	for _, x := range FrontierAxes(rows) {
		for _, m := range PlotMetrics {
			more, err := UtilityFigures(title, rows, PlotOptions{Metric: m, X: x})
			if err != nil {
				return nil, err
			}
			figs = append(figs, more...)
		}
	}
	var out []figure
	for _, f := range figs {
		metric := ""
		switch {
		case strings.HasPrefix(f.Name, "accuracy"):
			metric = "accuracy"
		case strings.HasPrefix(f.Name, "macro-f1"):
			metric = "macro-f1"
		}
		fv, err := figureView(f, captionOf(f.Name), metric)
		if err != nil {
			return nil, err
		}
		out = append(out, fv)
	}
	return out, nil
}

func captionOf(name string) string {
	metric, x, frontier := strings.Cut(name, "-vs-")
	if metric == "privacy" {
		return "privacy: shares of tokens left unchanged and out of vocabulary, against ε"
	}
	if !frontier {
		return metric + " against ε (mean over seeds, band ± sd; dashed grey: the unprivatized baseline)"
	}
	return metric + " against " + x + ": the privacy–utility frontier, comparable across privacy notions"
}

func figureView(f Figure, caption, metric string) (figure, error) {
	svg, err := f.SVG(caption)
	if err != nil {
		return figure{}, err
	}
	return figure{Caption: caption, Metric: metric, SVG: template.HTML(svg)}, nil
}

// gridHTML renders a table: a caption, a header row whose buttons sort
// the table (numeric columns by value), the cells escaped, the notes
// after it.
func gridHTML(id string, g table.Grid) template.HTML {
	var b strings.Builder
	esc := template.HTMLEscapeString
	fmt.Fprintf(&b, `<div class="table-wrap"><table id="%s" class="sortable">`, esc(id))
	if g.Caption != "" {
		fmt.Fprintf(&b, "<caption>%s</caption>", esc(g.Caption))
	}
	b.WriteString("<thead><tr>")
	for i, h := range g.Header {
		kind := "text"
		if g.IsNumeric(i) {
			kind = "number"
		}
		fmt.Fprintf(&b, `<th scope="col" data-kind="%s" aria-sort="none"><button type="button">%s</button></th>`, kind, esc(h))
	}
	b.WriteString("</tr></thead><tbody>")
	for _, row := range g.Rows {
		b.WriteString("<tr>")
		for i, c := range row {
			class := ""
			if g.IsNumeric(i) {
				class = "num"
			}
			switch {
			case i == 0:
				fmt.Fprintf(&b, `<th scope="row">%s</th>`, esc(c))
			case g.IsStrong(i):
				fmt.Fprintf(&b, `<td class="verdict %s"><strong>%s</strong></td>`, verdictClass(c), esc(c))
			default:
				fmt.Fprintf(&b, `<td class="%s">%s</td>`, class, esc(c))
			}
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table></div>")
	for _, n := range g.Notes {
		fmt.Fprintf(&b, `<p class="note">%s</p>`, strongText(esc(n)))
	}
	return template.HTML(b.String())
}

// agreementHTML is the agreement's summary, its conclusions and its
// sanity checks (what claims.Markdown shows), then how verdicts are
// reached.
func agreementHTML(id string, as []claims.Agreement) template.HTML {
	conc, sanity, variant := claims.Grid(as, claims.Conclusion), claims.Grid(as, claims.Sanity), claims.Grid(as, claims.Variant)
	conc.Caption = "Conclusions"
	sanity.Caption = "Sanity checks (what follows by construction or what a paper assumes; not counted among the conclusions)"
	variant.Caption = "Setup variants (conclusions tested again on another reading of a paper's setup or against another comparator; not counted)"
	var b strings.Builder
	fmt.Fprintf(&b, `<p class="summary">%s</p>`, template.HTMLEscapeString(claims.Summary(as)))
	if len(conc.Rows) > 0 {
		b.WriteString(string(gridHTML(id, conc)))
	}
	if len(sanity.Rows) > 0 {
		b.WriteString(string(gridHTML(id+"-sanity", sanity)))
	}
	if len(variant.Rows) > 0 {
		b.WriteString(string(gridHTML(id+"-variant", variant)))
	}
	fmt.Fprintf(&b, `<p class="note">%s</p>`, strongText(template.HTMLEscapeString(claims.RuleText)))
	return template.HTML(b.String())
}

func verdictClass(v string) string {
	switch v {
	case claims.Holds, claims.SameSize:
		return "holds"
	case claims.Fails, claims.Differs:
		return "fails"
	case claims.Unsettled:
		return "unsettled"
	}
	return "not-run"
}

// strongText turns the Markdown emphasis **x** of escaped text into
// <strong>x</strong> (the agreement's rule names its verdicts so).
func strongText(s string) string {
	parts := strings.Split(s, "**")
	if len(parts)%2 == 0 {
		return s // unbalanced: leave as it is
	}
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i%2 == 0:
			b.WriteString(p)
		default:
			b.WriteString("<strong>" + p + "</strong>")
		}
	}
	return b.String()
}

// RunID is the page's anchor of run r, the i-th shown: run-LABEL for a
// labelled run (the reproduction page's, named after the claims file's
// runs: stable links), runN otherwise.
func RunID(i int, r *Run) string {
	if r.Label != "" {
		return "run-" + slug(r.Label)
	}
	return fmt.Sprintf("run%d", i+1)
}
