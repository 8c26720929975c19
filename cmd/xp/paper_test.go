package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestPaperPlan: xp paper plan NAME prints each unsettled claim reading
// that run with the seeds that would settle it and their cost, from the
// committed records alone.
func TestPaperPlan(t *testing.T) {
	var out bytes.Buffer
	if err := paperCmd(context.Background(), []string{"plan", "--claims", "../../configs/published.yaml", "feyisetan-fig5-imdb"}, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"Fig. 5 (IMDb, test)", "seeds would settle it 4 times in 5 at the measured difference and spread", "a seed)"} {
		if !strings.Contains(got, want) {
			t.Errorf("paper plan printed no %q:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if !strings.HasPrefix(line, "  ") && !strings.Contains(line, "feyisetan-fig5-imdb") {
			t.Errorf("a claim that does not read the run: %s", line)
		}
	}
	if err := paperCmd(context.Background(), []string{"plan", "--claims", "../../configs/published.yaml", "no-such-run"}, &out); err == nil {
		t.Error("an unknown run was accepted")
	}
}
