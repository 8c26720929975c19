package results

import "testing"

// TestStatTextRounding: an sd that is the arithmetic's rounding (seeds
// that agree to 12 digits) is not shown; a real one is.
func TestStatTextRounding(t *testing.T) {
	r := StatRow{Seeds: 3, Names: []string{"N"}, Mean: []float64{999}, SD: []float64{9.583e-12}}
	if got := r.StatText("N"); got != "999" {
		t.Errorf("StatText = %q, want 999", got)
	}
	r.SD[0] = 0.5
	if got := r.StatText("N"); got != "999 ± 0.5" {
		t.Errorf("StatText = %q, want 999 ± 0.5", got)
	}
}
