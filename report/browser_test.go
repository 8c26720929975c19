package report_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/fixture"
	"github.com/xp-nlp/xp/report"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/runner"
	"github.com/xp-nlp/xp/table"
)

// fixtureRuns runs two small real sweeps through the runner on the
// fixture data (a utility run, Laplace at two ε, train- and test-time,
// two seeds; and a plausible-deniability analysis run) and returns their
// folders.
func fixtureRuns(t *testing.T) (utility, analysis string) {
	t.Helper()
	dir := t.TempDir()
	cfg, err := fixture.Write(dir, fixture.Options{Train: 30, Test: 15, Epochs: 1, Epsilon: []float64{1, 20}, Seeds: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The utility run measures privacy (three more columns) and flags
	// every privatized split (max_oov 0): the widest table a run writes.
	if err := os.WriteFile(cfg, append(text, []byte("privacy:\n  top: 20\nchecks:\n  max_oov: 0\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	acfg := filepath.Join(dir, "analysis.yaml")
	atext := strings.Replace(string(text), "apply: [none, train, test]\n", "analysis:\n  kind: plausible-deniability\n  words: 10\n  draws: 50\n", 1)
	atext = strings.Replace(atext, "output: "+filepath.Join(dir, "out"), "output: "+filepath.Join(dir, "analysis-out"), 1)
	if atext == string(text) || !strings.Contains(atext, "analysis-out") {
		t.Fatalf("fixture config changed: cannot derive the analysis config from\n%s", text)
	}
	if err := os.WriteFile(acfg, []byte(atext), 0o644); err != nil {
		t.Fatal(err)
	}
	var outs []string
	for _, path := range []string{cfg, acfg} {
		c, err := experiments.Load(path, experiments.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := runner.Run(context.Background(), c, runner.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Failed+sum.Missing > 0 {
			t.Fatalf("%s: %d cells failed, %d missing", path, sum.Failed, sum.Missing)
		}
		outs = append(outs, c.Output)
	}
	return outs[0], outs[1]
}

// browser finds Chromium (installed by scripts/setup.sh) or skips.
func browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("SKIP: no Chromium on PATH (scripts/setup.sh installs Debian's chromium): the report page is not checked in a browser")
	return ""
}

// artifactDir is where the test keeps its screenshot: $XP_ARTIFACTS
// (make test sets build/artifacts) or a temporary folder.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("XP_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	dir = filepath.Join(dir, t.Name())
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pageLog is what a page did while it loaded: console errors and
// warnings, exceptions, log entries (a content-security violation among
// them) and every request.
type pageLog struct {
	mu       sync.Mutex
	problems []string
	requests []string
}

func (l *pageLog) add(to *[]string, s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	*to = append(*to, s)
}

// open starts a headless Chromium on the page at path and returns its
// context and log.
func open(t *testing.T, exe, path string) (context.Context, *pageLog) {
	t.Helper()
	// The profile is removed after the browser is gone (t.TempDir's
	// removal may race Chromium's last writes).
	profile, err := os.MkdirTemp("", "xp-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(profile), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1280, 1024))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(func() {
		chromedp.Cancel(ctx) // closes the browser and waits for it
		cancel2()
		cancel()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	ctx, cancel3 := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel3)
	l := &pageLog{}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning || e.Type == runtime.APITypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				l.add(&l.problems, fmt.Sprintf("console %s: %s", e.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			l.add(&l.problems, "exception: "+e.ExceptionDetails.Text+" "+e.ExceptionDetails.Error())
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError || e.Entry.Level == log.LevelWarning {
				l.add(&l.problems, fmt.Sprintf("log %s: %s %s", e.Entry.Level, e.Entry.Text, e.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			l.add(&l.requests, e.Request.URL)
		}
	})
	if err := chromedp.Run(ctx, network.Enable(), log.Enable(), runtime.Enable(),
		chromedp.Navigate("file://"+path), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("load %s in Chromium: %v", path, err)
	}
	// Let late console messages and requests arrive.
	if err := chromedp.Run(ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	return ctx, l
}

// offline returns what the page did that a self-contained page must not:
// console errors, exceptions, and requests other than the page's own.
func (l *pageLog) offline(path string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.problems)
	for _, u := range l.requests {
		if u != "file://"+path {
			out = append(out, "request: "+u)
		}
	}
	return out
}

type figureInfo struct {
	Name     string  `json:"name"`
	Metric   string  `json:"metric"`
	Series   int     `json:"series"`
	Declared int     `json:"declared"`
	Marks    int     `json:"marks"`
	Paths    int     `json:"paths"`
	Width    float64 `json:"width"`
	Visible  bool    `json:"visible"`
}

const figuresJS = `Array.from(document.querySelectorAll("svg.figure")).map(s => ({
	name: s.dataset.figure,
	metric: s.closest("figure").dataset.metric || "",
	series: s.querySelectorAll("g.series").length,
	declared: +s.dataset.seriesCount,
	marks: s.querySelectorAll("g.series circle").length,
	paths: s.querySelectorAll("path").length,
	width: s.getBoundingClientRect().width,
	visible: getComputedStyle(s.closest("figure")).display !== "none",
}))`

// TestReportInBrowser renders the report of two small real runs in
// headless Chromium and checks that it loads with no console error and
// no request, that every figure is drawn with the expected number of
// series, that the utility table holds the records' numbers, that the
// metric switch and table sorting work, and keeps a screenshot.
func TestReportInBrowser(t *testing.T) {
	exe := browser(t)
	utility, analysis := fixtureRuns(t)
	var runs []*report.Run
	for _, d := range []string{utility, analysis} {
		r, err := report.Read(d)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	var page bytes.Buffer
	if err := report.Write(&page, runs, report.Options{Generator: "xp test"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, l := open(t, exe, path)
	if bad := l.offline(path); len(bad) > 0 {
		t.Errorf("the page is not self-contained and clean:\n%s", strings.Join(bad, "\n"))
	}

	// Figures: the utility run draws accuracy, macro-F1, privacy and the
	// frontiers against the unchanged share, one panel per mode (train,
	// test) with one series per setting (laplace); privacy three series
	// per setting; the analysis run draws its statistics against ε and
	// the histograms of N_w and S_w (one panel per ε).
	var figs []figureInfo
	if err := chromedp.Run(ctx, chromedp.Evaluate(figuresJS, &figs)); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"accuracy": 2, "macro-f1": 2, "privacy": 6, "accuracy-vs-unchanged": 2, "macro-f1-vs-unchanged": 2,
		"plausible-deniability-N_w-hist": 2, "plausible-deniability-S_w-hist": 2}
	seen := map[string]bool{}
	for _, f := range figs {
		seen[f.Name] = true
		if f.Paths == 0 || f.Marks == 0 || f.Series != f.Declared {
			t.Errorf("figure %s: %d paths, %d marks, %d series drawn of %d declared", f.Name, f.Paths, f.Marks, f.Series, f.Declared)
		}
		if n, ok := want[f.Name]; ok && f.Series != n {
			t.Errorf("figure %s: %d series, want %d", f.Name, f.Series, n)
		}
		if f.Visible != (f.Metric != "macro-f1") {
			t.Errorf("figure %s (metric %q): visible %v before the switch", f.Name, f.Metric, f.Visible)
		}
		if f.Visible && f.Width < 200 {
			t.Errorf("figure %s: %.0f px wide", f.Name, f.Width)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no figure %s; the page has %v", name, figs)
		}
	}
	if !seen["plausible-deniability"] {
		t.Errorf("no figure of the analysis's statistics against ε")
	}

	// The switch shows macro-F1 and hides accuracy, without a request.
	if err := chromedp.Run(ctx, chromedp.Click(`#run1 input[value="macro-f1"]`, chromedp.ByQuery), chromedp.Evaluate(figuresJS, &figs)); err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.Metric != "" && f.Visible != (f.Metric == "macro-f1") {
			t.Errorf("after switching to macro-F1, figure %s (metric %s) visible %v", f.Name, f.Metric, f.Visible)
		}
	}

	// The utility table holds the records' numbers: the baseline's mean
	// test accuracy over its seeds, computed here from the records.
	st, err := rundir.ReadState(utility)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.Records()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	var n int
	for _, r := range recs {
		if r.Cell.Mode == "none" && r.Status == "ok" {
			sum += r.Test.Accuracy
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d baseline records, want 2", n)
	}
	var baseline []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`Array.from(document.querySelectorAll("#run1-utility tbody tr")).filter(r => r.cells[0].textContent === "none").map(r => r.cells[5].textContent)`, &baseline)); err != nil {
		t.Fatal(err)
	}
	if wantAcc := fmt.Sprintf("%.4f ±", sum/float64(n)); len(baseline) != 1 || !strings.HasPrefix(baseline[0], wantAcc) {
		t.Errorf("baseline accuracy in the page: %q, want %q… (from the records)", baseline, wantAcc)
	}
	// Every row of the records' table is in the page, cell for cell.
	var cells [][]string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`Array.from(document.querySelectorAll("#run1-utility tbody tr")).map(r => Array.from(r.cells).map(c => c.textContent))`, &cells)); err != nil {
		t.Fatal(err)
	}
	grid := table.UtilityGrid(runs[0].Rows)
	if len(cells) != len(grid.Rows) {
		t.Fatalf("utility table: %d rows in the page, %d in the records' table", len(cells), len(grid.Rows))
	}
	for i := range cells {
		if !slices.Equal(cells[i], grid.Rows[i]) {
			t.Errorf("utility row %d: page %q, records %q", i, cells[i], grid.Rows[i])
		}
	}

	// Sorting by accuracy orders the rows by value, and says so.
	var accs []string
	var sorted string
	if err := chromedp.Run(ctx, chromedp.Click(`#run1-utility thead th:nth-child(6) button`, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("#run1-utility tbody tr")).map(r => r.cells[5].textContent)`, &accs),
		chromedp.AttributeValue(`#run1-utility thead th:nth-child(6)`, "aria-sort", &sorted, nil, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if sorted != "ascending" || !slices.IsSortedFunc(accs, func(a, b string) int { return strings.Compare(a, b) }) {
		t.Errorf("sorted by accuracy (aria-sort %q): %q", sorted, accs)
	}

	// At 1280 px every table fits its column (no horizontal scroll hid
	// the privacy and flags columns) and no row is a tower of wrapped
	// words (flagged rows stood 170 px tall).
	var fit []struct {
		Table  string  `json:"table"`
		Scroll float64 `json:"scroll"`
		Client float64 `json:"client"`
		Row    float64 `json:"row"`
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`Array.from(document.querySelectorAll(".table-wrap")).map(w => ({
		table: (w.querySelector("table") || {}).id || "",
		scroll: w.scrollWidth, client: w.clientWidth,
		row: Math.max(0, ...Array.from(w.querySelectorAll("tbody tr")).map(r => r.getBoundingClientRect().height))}))`, &fit)); err != nil {
		t.Fatal(err)
	}
	for _, f := range fit {
		if f.Scroll > f.Client+1 {
			t.Errorf("table %q: %.0f px wide in a %.0f px column at a 1280 px window", f.Table, f.Scroll, f.Client)
		}
		if f.Row > 90 {
			t.Errorf("table %q: a row %.0f px tall", f.Table, f.Row)
		}
	}

	var shot []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&shot, 100)); err != nil {
		t.Fatal(err)
	}
	dir := artifactDir(t)
	if err := os.WriteFile(filepath.Join(dir, "report.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes); page %d bytes", filepath.Join(dir, "report.png"), len(shot), page.Len())
	if bad := l.offline(path); len(bad) > 0 {
		t.Errorf("after clicking:\n%s", strings.Join(bad, "\n"))
	}
}

// TestBrowserCheckCatchesRequests: the check above is not blind — a page
// that asks for an image over the network (blocked by the page's policy)
// or throws is reported.
func TestBrowserCheckCatchesRequests(t *testing.T) {
	exe := browser(t)
	var page bytes.Buffer
	if err := report.Write(&page, nil, report.Options{Generator: "xp test"}); err != nil {
		t.Fatal(err)
	}
	// An injected image and an injected script (both refused by the
	// page's policy), and the page's own script replaced by one that
	// throws — the policy allowing it by its hash, so that it runs.
	own := regexp.MustCompile(`(?s)<script>.*</script>`)
	thrower := `throw new Error("boom")`
	sum := sha256.Sum256([]byte(thrower))
	bad := own.ReplaceAllLiteralString(page.String(), "<script>"+thrower+"</script>")
	bad = strings.Replace(bad, "<main>", `<main><img src="http://192.0.2.1/x.png" alt=""><script>alert("injected")</script>`, 1)
	bad = regexp.MustCompile(`script-src '[^']*'`).ReplaceAllLiteralString(bad, "script-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	path := filepath.Join(t.TempDir(), "bad.html")
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, l := open(t, exe, path)
	got := strings.Join(l.offline(path), "\n")
	if !strings.Contains(got, "192.0.2.1") {
		t.Errorf("the blocked image request is not reported:\n%s", got)
	}
	if !strings.Contains(got, "Executing inline script violates") {
		t.Errorf("the injected script is not refused by the policy:\n%s", got)
	}
	if !strings.Contains(got, "boom") {
		t.Errorf("the exception is not reported:\n%s", got)
	}
}
