package table

import "testing"

func TestColumnName(t *testing.T) {
	for in, want := range map[string]string{
		"N_w %": "n_w_pct", "recovery % rare": "recovery_pct_rare", "E_M held-out": "e_m_held_out", "L_M flip": "l_m_flip",
		"unchanged": "unchanged", "ε": "epsilon", "matched ε": "matched_epsilon", "S_w mean": "s_w_mean", "d10 p50": "d10_p50",
	} {
		if got := columnName(in); got != want {
			t.Errorf("columnName(%q) = %q, want %q", in, got, want)
		}
	}
}
