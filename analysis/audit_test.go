package analysis

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/mech/mechtest"
	"github.com/xp-nlp/xp/spec"
)

// auditSpace is six 2-d words close enough that ε·d stays small, so that
// a loss above the bound shows within a few thousand draws.
func auditSpace(t *testing.T) (*mech.Space, []string) {
	t.Helper()
	e := mechtest.Embedding(2, []string{"w0", "w1", "w2", "w3", "w4", "w5"}, []float32{0, 0, 0.6, 0.1, -0.3, 0.5, 0.4, -0.5, -0.6, -0.2, 0.9, 0.7})
	return mechtest.Space(t, e), e.Words
}

// TestAuditEveryMechanism runs dp-audit on every mechanism spec
// describes: those with a guarantee show no violation, Vickrey with
// exclude_input and SanText+ (no guarantee) show theirs. A mechanism
// added to spec without a case here fails.
func TestAuditEveryMechanism(t *testing.T) {
	s, words := auditSpace(t)
	// w0 … w2 frequent, w3 and w4 rare: SanText+'s sensitive words.
	counts := map[string]int64{"w0": 90, "w1": 80, "w2": 70, "w3": 3, "w4": 2} // w5 is no task word: never an input, though a member of CusText sets
	cases := []struct {
		name    string
		params  mech.Params
		violate bool
	}{
		{"laplace", nil, false},
		{"vickrey", nil, false},
		{"vickrey", mech.Params{"lambda": 0.5}, false},
		{"vickrey", mech.Params{"exclude_input": true}, true},
		{"mahalanobis", nil, false},
		{"santext", nil, false},
		{"santext+", mech.Params{"sensitive": 0.5}, true},
		{"tem", mech.Params{"gamma": 0.5}, false},
		{"truncated-gumbel", mech.Params{"min_dist": 6.0, "max_dist": 12.0}, true},
		{"diffractor", nil, false},
		{"diffractor", mech.Params{"method": "tem", "gamma": 2}, false},
		{"custext", mech.Params{"k": 3}, false},
		{"custext", mech.Params{"k": 2, "mapping": "conservative", "score": "euclidean"}, false},
		{"custext+", mech.Params{"k": 3}, false},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.name] = true
		t.Run(c.name+fmt.Sprint(c.params), func(t *testing.T) {
			m, err := mech.New(c.name, s, 1.5, c.params, mech.Options{Counts: counts})
			if err != nil {
				t.Fatal(err)
			}
			a, err := Run(context.Background(), "dp-audit", map[string]any{"from": "list", "list": words, "draws": 20000},
				Env{Space: s, Mech: m, Source: mech.Source{Seed: 1, Cell: "audit"}, Counts: counts, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			pairs, bad := a.Stat("pairs"), a.Stat("violations")
			if pairs == 0 {
				t.Fatalf("no pair audited (%s)", a.Method)
			}
			if c.violate != (bad > 0) {
				t.Errorf("%s: %v violations of %v pairs, max loss − bound %v (95%% low %v), want violation %v; notes %q",
					a.Method, bad, pairs, a.Stat("max loss − bound"), a.Stat("max loss − bound, 95% low"), c.violate, a.Notes)
			}
			if c.violate && m.Notion() != spec.NoDP {
				t.Errorf("violating variant reports %s", m.Notion())
			}
		})
	}
	for _, n := range spec.Names(spec.Mechanism) {
		if !covered[n] {
			t.Errorf("mechanism %s has no audit case", n)
		}
	}
}

// halved states half of SanText's bound, which SanText exceeds: the
// exact audit must see it.
type halved struct{ *mech.SanText }

func (h halved) Bound(x, y int) float64 { return h.SanText.Bound(x, y) / 4 }

func TestAuditExactCatchesExcess(t *testing.T) {
	s, words := auditSpace(t)
	st, err := mech.NewSanText(s, 1.5, mech.SanTextParams{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m       mech.Mechanism
		violate bool
	}{{st, false}, {halved{st}, true}} {
		a, err := Run(context.Background(), "dp-audit", map[string]any{"from": "list", "list": words}, Env{Space: s, Mech: c.m, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if a.Method != "exact" || a.Stat("pairs") != 30 || (a.Stat("violations") > 0) != c.violate {
			t.Errorf("%T: %s, %v pairs, %v violations, max loss/bound %v", c.m, a.Method, a.Stat("pairs"), a.Stat("violations"), a.Stat("max loss / bound"))
		}
		// The exponential mechanism uses at most its bound, and most of it.
		if r := a.Stat("max loss / bound"); !c.violate && (r > 1 || r < 0.5) {
			t.Errorf("SanText's max loss / bound = %v, want in [0.5, 1]", r)
		}
	}
}

func TestClopperPearson(t *testing.T) {
	cp := newClopperPearson(100, 0.025)
	// Known values (R: binom.test(5, 100)$conf.int = 0.01643, 0.11284).
	if lo, hi := cp.lower(0.05), cp.upper(0.05); math.Abs(lo-0.01643) > 5e-5 || math.Abs(hi-0.11284) > 5e-5 {
		t.Errorf("5 of 100: [%v, %v], want [0.01643, 0.11284]", lo, hi)
	}
	if cp.lower(0) != 0 || cp.upper(1) != 1 {
		t.Error("edges")
	}
	if hi := cp.upper(0); math.Abs(hi-(1-math.Pow(0.025, 0.01))) > 1e-9 {
		t.Errorf("0 of 100: upper %v, want 1 − 0.025^(1/100)", hi)
	}
}

// tight states an eighth of Laplace's bound: the sampled audit must
// certify the excess, not only estimate it.
type tight struct{ *mech.Laplace }

func (t tight) Bound(x, y int) float64 { return t.Laplace.Bound(x, y) / 8 }

func TestAuditSampledCatchesExcess(t *testing.T) {
	s, words := auditSpace(t)
	lap, err := mech.NewLaplace(s, 1.5, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m       mech.Mechanism
		violate bool
	}{{lap, false}, {tight{lap}, true}} {
		a, err := Run(context.Background(), "dp-audit", map[string]any{"from": "list", "list": words, "draws": 20000},
			Env{Space: s, Mech: c.m, Source: mech.Source{Seed: 1, Cell: "audit"}, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		low := a.Stat("max loss − bound, 95% low")
		if (a.Stat("violations") > 0) != c.violate || (low > 0) != c.violate || a.Stat("max loss − bound") < low {
			t.Errorf("%T: %v violations, max loss − bound %v, 95%% low %v", c.m, a.Stat("violations"), a.Stat("max loss − bound"), low)
		}
	}
}

// TestAuditUnderflow: on a line of 1,500 words 1-Diffractor's exact
// probabilities of far positions underflow to 0 (e^{−ε·1499}); the audit
// must compare log-probabilities there, not report an infinite loss.
func TestAuditUnderflow(t *testing.T) {
	xs := make([]float32, 1500)
	for i := range xs {
		xs[i] = float32(i)
	}
	s := mechtest.Space(t, mechtest.Line(xs...))
	m, err := mech.New("diffractor", s, 1, nil, mech.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Run(context.Background(), "dp-audit", map[string]any{"from": "list", "list": []string{"w0", "w700", "w1499"}}, Env{Space: s, Mech: m, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a.Stat("violations") != 0 || !(a.Stat("max loss / bound") <= 1) {
		t.Errorf("%v violations, max loss / bound %v, max loss − bound %v", a.Stat("violations"), a.Stat("max loss / bound"), a.Stat("max loss − bound"))
	}
}

// TestAuditSingularMetric: Mahalanobis at λ = 1 over fewer words than
// dimensions has a singular Σ_p, so its metric is undefined: the audit
// fails instead of recording NaN statistics without a violation.
func TestAuditSingularMetric(t *testing.T) {
	s := mechtest.Space(t, mechtest.Embedding(4, []string{"a", "b", "c"}, []float32{0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}))
	m, err := mech.New("mahalanobis", s, 1, mech.Params{"lambda": 1.0}, mech.Options{})
	if err != nil {
		t.Skipf("mahalanobis refuses the singular Σ_p itself: %v", err)
	}
	_, err = Run(context.Background(), "dp-audit", map[string]any{"from": "list", "list": []string{"a", "b"}, "draws": 10},
		Env{Space: s, Mech: m, Source: mech.Source{Seed: 1}, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "no number as the bound") {
		t.Errorf("got %v, want the undefined bound reported", err)
	}
}
