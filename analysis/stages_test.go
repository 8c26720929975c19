package analysis

import (
	"context"
	"math"
	"testing"
)

func TestSelect(t *testing.T) {
	pts := []Point{
		{"a", 1, map[string]float64{"E": 0.9, "L": 0.30}},
		{"a", 2, map[string]float64{"E": 0.7, "L": 0.10}},
		{"b", 1, map[string]float64{"E": 0.8, "L": 0.05}},
		{"b", 4, map[string]float64{"E": 0.8, "L": 0.01}}, // tie on E: the smaller ε (1) wins
		{"c", 1, map[string]float64{"E": 0.95}},           // no loss: not a candidate
		{"d", 1, map[string]float64{"E": math.NaN(), "L": 0}},
	}
	for _, c := range []struct {
		budget         float64
		best, feasible int
	}{{0.2, 2, 3}, {0.5, 0, 4}, {0.02, 3, 1}, {0.001, -1, 0}} {
		best, feasible := Select(pts, "E", "L", c.budget)
		if best != c.best || feasible != c.feasible {
			t.Errorf("budget %v: best %d of %d feasible, want %d of %d", c.budget, best, feasible, c.best, c.feasible)
		}
	}
}

func TestSearchEpsilon(t *testing.T) {
	f := func(e float64) (float64, error) { return e / (1 + e), nil } // grows from 0 to 1
	for _, target := range []float64{0.05, 0.3, 0.9} {
		eps, v, trace, ok, err := SearchEpsilon(context.Background(), target, 0.001, 1000, 0.01, 40, f)
		if err != nil || !ok {
			t.Fatalf("target %v: ok %v err %v", target, ok, err)
		}
		if math.Abs(v-target) > 0.01*target || math.Abs(eps/(1+eps)-v) > 1e-12 {
			t.Errorf("target %v: ε %v gives %v", target, eps, v)
		}
		if len(trace) > 40 || trace[len(trace)-1].Epsilon != eps {
			t.Errorf("target %v: trace %v", target, trace)
		}
	}
	// Out of reach: the closest end, not ok.
	eps, _, _, ok, _ := SearchEpsilon(context.Background(), 0.999999, 0.001, 10, 0.0001, 40, f)
	if ok || eps != 10 {
		t.Errorf("unreachable target: ε %v ok %v", eps, ok)
	}
}
