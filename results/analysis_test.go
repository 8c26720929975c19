package results

import "testing"

func TestColumnName(t *testing.T) {
	for in, want := range map[string]string{
		"N_w %": "n_w_pct", "recovery % rare": "recovery_pct_rare", "E_M held-out": "e_m_held_out", "L_M flip": "l_m_flip",
		"unchanged": "unchanged", "ε": "epsilon", "matched ε": "matched_epsilon", "S_w mean": "s_w_mean", "d10 p50": "d10_p50",
	} {
		if got := ColumnName(in); got != want {
			t.Errorf("ColumnName(%q) = %q, want %q", in, got, want)
		}
	}
}

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
