package runner

import (
	"strings"
	"testing"

	"github.com/xp-nlp/xp/analysis"
)

// TestMatchFlag: a match is called one on the strongest attacker only
// where some attacker beats copying and the tagger does not beat the
// attacker matched (the SanText rows of the study the issue reports:
// context-free 60.4% against 66.05% unchanged, all "no better than
// copying", were called matched).
func TestMatchFlag(t *testing.T) {
	for _, c := range []struct {
		cheap  analysis.CheapRecovery
		tagger float64
		want   string
	}{
		{analysis.CheapRecovery{Copy: 66.05, ContextFree: 60.4}, 66.2, "matched on copying alone"},
		{analysis.CheapRecovery{Copy: 40, ContextFree: 60}, 60.3, ""},
		{analysis.CheapRecovery{Copy: 40, ContextFree: 60}, 75, "the tagger recovers 75% here, above the 60% matched"},
		{analysis.CheapRecovery{Copy: 60, ContextFree: 50}, 70, "the tagger recovers 70% here, above the 60% matched"},
		{analysis.CheapRecovery{Copy: 60, ContextFree: 50}, 60.4, "matched on copying alone"},
	} {
		got := matchFlag(c.cheap, c.tagger)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("matchFlag(%+v, %v) = %q, want %q", c.cheap, c.tagger, got, c.want)
		}
	}
}
