package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/claims"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/table"
)

// syntheticRun is a run of made-up rows whose config name needs escaping.
func syntheticRun() *Run {
	nan := math.NaN()
	row := func(setting, mode string, eps, acc float64) results.Row {
		return results.Row{Setting: setting, Notion: spec.MetricDP, Mode: mode, Epsilon: eps, Seeds: 2, Accuracy: acc, AccSD: 0.01, AccCI: 0.05,
			MacroF1: acc - 0.01, MacroF1SD: 0.01, MacroF1CI: 0.05, Diff: nan, DiffCI: nan, Unchanged: eps / 100, OOV: 0.01, Stopwords: nan,
			UnchangedCI: nan, TypeUnchanged: nan, Nw: nan, Sw: nan, Recovery: nan, Chance: 0.5}
	}
	base := row("none", "none", 0, 0.8)
	base.Notion, base.Unchanged = "", nan
	st := &rundir.State{Dir: "runs/x", Plan: rundir.Plan{Config: experiments.Config{Name: `<script>alert("x")</script>`, Seeds: []uint64{1, 2}}},
		Cells: []rundir.CellStatus{{Status: "failed", Error: "boom <here>"}}, Failed: 1}
	return &Run{Dir: "runs/x", State: st, Rows: []results.Row{base, row("laplace", "train", 10, 0.6), row("laplace", "train", 50, 0.75),
		row("laplace", "test", 10, 0.55), row("laplace", "test", 50, 0.7)}}
}

// TestWrite: the page escapes what it shows, makes no reference outside
// itself, is the same bytes when written twice, holds the table's cells
// and one figure per utility view, and lists the failed cell.
func TestWrite(t *testing.T) {
	var a, b bytes.Buffer
	if err := Write(&a, []*Run{syntheticRun()}, Options{Generator: "xp test"}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, []*Run{syntheticRun()}, Options{Generator: "xp test"}); err != nil {
		t.Fatal(err)
	}
	page := a.String()
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two pages of the same run differ")
	}
	if strings.Contains(page, `<script>alert`) || strings.Contains(page, "boom <here>") {
		t.Error("the page does not escape the config's name or a cell's error")
	}
	if !strings.Contains(page, "boom &lt;here&gt;") {
		t.Error("the failed cell's error is not listed")
	}
	// No reference outside the page: no src or href but fragments, no
	// url(), no @import.
	for _, re := range []string{`(?i)\b(src|href)\s*=\s*"[^#"]`, `(?i)url\(`, `(?i)@import`} {
		if m := regexp.MustCompile(re).FindString(page); m != "" {
			t.Errorf("the page refers outside itself: %q", m)
		}
	}
	if !strings.Contains(page, "default-src 'none'") {
		t.Error("no content-security policy")
	}
	// The one script is allowed by its hash, not by 'unsafe-inline' (an
	// injected script would run).
	m := regexp.MustCompile(`(?s)<script>(.*)</script>`).FindStringSubmatch(page)
	sum := sha256.Sum256([]byte(m[1]))
	if want := "script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(html.UnescapeString(page), want) || strings.Contains(page, "script-src 'unsafe-inline'") {
		t.Errorf("the policy does not allow the page's script by its hash (%s)", want)
	}
	for _, cell := range table.UtilityGrid(syntheticRun().Rows).Rows[1] {
		if cell != "" && !strings.Contains(page, ">"+escaped(cell)+"<") {
			t.Errorf("cell %q not in the page", cell)
		}
	}
	figs := regexp.MustCompile(`data-figure="([^"]+)"`).FindAllStringSubmatch(page, -1)
	var names []string
	for _, f := range figs {
		names = append(names, f[1])
	}
	if want := "accuracy macro-f1 privacy accuracy-vs-unchanged macro-f1-vs-unchanged"; strings.Join(names, " ") != want {
		t.Errorf("figures %v, want %s", names, want)
	}
}

func escaped(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

func TestStrongText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a **b** c", "a <strong>b</strong> c"},
		{"no emphasis", "no emphasis"},
		{"odd ** one", "odd ** one"},
	} {
		if got := strongText(c.in); got != c.want {
			t.Errorf("strongText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestPaperPage: the reproduction page opens with the verdicts — the
// summary, then the conclusions, the sanity checks and the variants —
// before any run's section, shows no side-by-side matrix of its unrelated
// runs, and escapes a claim's text.
func TestPaperPage(t *testing.T) {
	as := []claims.Agreement{
		{Claim: claims.Claim{Kind: claims.Conclusion, Item: "Fig. 1", Says: `<b>up</b>`, Rule: "greater", Stat: "x", Points: []claims.Point{{Setting: "a"}, {Setting: "b"}}}, Verdict: claims.Holds},
		{Claim: claims.Claim{Kind: claims.Sanity, Item: "Fig. 2", Says: "down", Rule: "greater", Stat: "x", Points: []claims.Point{{Setting: "a"}, {Setting: "b"}}}, Verdict: claims.Fails},
	}
	other := syntheticRun()
	other.Dir = "runs/y"
	var b bytes.Buffer
	if err := Write(&b, []*Run{syntheticRun(), other}, Options{Paper: true, Agreements: as, Generator: PaperGenerator}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	summary, conc, sanity, run := strings.Index(page, "1 conclusions: 1 hold"), strings.Index(page, "Conclusions</caption>"), strings.Index(page, "Sanity checks"), strings.Index(page, `id="run1"`)
	if summary < 0 || conc < summary || sanity < conc || run < sanity {
		t.Errorf("summary at %d, conclusions at %d, sanity checks at %d, first run at %d: want the verdicts first", summary, conc, sanity, run)
	}
	if strings.Contains(page, `id="compare"`) {
		t.Error("the reproduction page compares its unrelated runs side by side")
	}
	if strings.Contains(page, "<b>up</b>") || !strings.Contains(page, "&lt;b&gt;up&lt;/b&gt;") {
		t.Error("a claim's text is not escaped")
	}
}
