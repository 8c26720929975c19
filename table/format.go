package table

import (
	"fmt"
	"math"
	"strings"

	"github.com/xp-nlp/xp/results"
)

// percent prints a share in percent (— for NaN).
func percent(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// pm prints a mean over n seeds with its sample sd (the mean alone for
// one seed; — for none).
func pm(m, sd float64, n int) string {
	switch {
	case n == 0 || math.IsNaN(m):
		return "—"
	case n == 1:
		return fmt.Sprintf("%.4f", m)
	}
	return fmt.Sprintf("%.4f ± %.4f", m, sd)
}

// interval prints mean ± half-width as [low, high], within [0, 1] (a
// share's interval; two seeds' t-interval reached −0.27 and 1.51); one of
// zero width — seeds that agree, not an exact value — is not printed.
func interval(m, ci float64) string {
	if math.IsNaN(m) || math.IsNaN(ci) || ci == 0 {
		return "—"
	}
	return fmt.Sprintf("[%.4f, %.4f]", max(0, m-ci), min(1, m+ci))
}

// diff prints a paired difference and its interval, within [−1, 1]; an
// interval of zero width (every seed's difference the same: not an exact
// value) is not printed.
func diff(d, ci float64) string {
	switch {
	case math.IsNaN(d):
		return "—"
	case math.IsNaN(ci) || ci == 0:
		return fmt.Sprintf("%+.4f", d)
	}
	return fmt.Sprintf("%+.4f [%+.4f, %+.4f]", d, max(-1, d-ci), min(1, d+ci))
}

// testInterval prints the test set's Wilson interval.
func testInterval(r results.Row) string {
	if math.IsNaN(r.TestLo) {
		return "—"
	}
	return fmt.Sprintf("[%.4f, %.4f]", r.TestLo, r.TestHi)
}

// pValue prints the Holm-adjusted paired p against the baseline with the
// discordant examples it rests on.
func pValue(r results.Row) string {
	if math.IsNaN(r.PHolm) {
		return "—"
	}
	return fmt.Sprintf("%.2g (%d)", r.PHolm, r.VsBaseline.Discordant)
}

// texPM prints mean ± half-width, or the interval [low, high] cut to the
// quantity's range [lo, hi] where the half-width would leave it (two
// seeds' macro-F1 read 0.574 ± 1.400); a zero half-width is not printed.
func texPM(m, ci, lo, hi float64) string {
	switch {
	case math.IsNaN(m):
		return "--"
	case math.IsNaN(ci) || ci == 0:
		return fmt.Sprintf("%.3f", m)
	case m-ci < lo || m+ci > hi:
		return fmt.Sprintf("%.3f [%.3f, %.3f]", m, max(lo, m-ci), min(hi, m+ci))
	}
	return fmt.Sprintf("%.3f $\\pm$ %.3f", m, ci)
}

func texPercent(x float64) string {
	if math.IsNaN(x) {
		return "--"
	}
	return fmt.Sprintf("%.1f\\%%", 100*x)
}

var texEscaper = strings.NewReplacer("±", `$\pm$`, "ε", `$\varepsilon$`, "Δ", `$\Delta$`, "—", "---", "−", "$-$", "≤", `$\leq$`, "≥", `$\geq$`, "→", `$\to$`, "×", `$\times$`, "<", `\textless{}`, ">", `\textgreater{}`, `\`, `\textbackslash{}`, "_", `\_`, "%", `\%`, "&", `\&`, "#", `\#`, "$", `\$`, "{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`)

func texEscape(s string) string { return texEscaper.Replace(s) }
