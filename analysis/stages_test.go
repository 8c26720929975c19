package analysis

import (
	"context"
	"fmt"
	"math"
	"testing"
)

func TestSelect(t *testing.T) {
	pts := []Point{
		{"a", 1, map[string]float64{"E": 0.9, "L": 0.30}, false},
		{"a", 2, map[string]float64{"E": 0.7, "L": 0.10}, false},
		{"b", 1, map[string]float64{"E": 0.8, "L": 0.05}, false},
		{"b", 4, map[string]float64{"E": 0.8, "L": 0.01}, false}, // tie on E: the smaller ε (1) wins
		{"c", 1, map[string]float64{"E": 0.95}, false},           // no loss: not a candidate
		{"d", 1, map[string]float64{"E": math.NaN(), "L": 0}, false},
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

// TestSelectPaper: Algorithm 2 as published doubles ε on the start
// setting (t = 0) until its loss is below the budget, then takes the
// largest E at that ε only — not the grid's arg-max, which here is a
// point at another ε.
func TestSelectPaper(t *testing.T) {
	pt := func(setting string, eps, e, l float64) Point {
		return Point{Setting: setting, Epsilon: eps, Stats: map[string]float64{"E": e, "L": l}, Start: setting == "t=0"}
	}
	pts := []Point{
		pt("t=0", 1, 0.9, 0.30), pt("t=0.5", 1, 0.95, 0.20), pt("t=1", 1, 0.99, 0.04),
		pt("t=0", 2, 0.7, 0.10), pt("t=0.5", 2, 0.8, 0.09), pt("t=1", 2, 0.85, 0.12),
		pt("t=0", 4, 0.5, 0.01), pt("t=0.5", 4, 0.6, 0.02), pt("t=1", 4, 0.7, 0.05),
	}
	for _, c := range []struct {
		budget   float64
		best     int
		eps      float64
		feasible int
	}{
		{0.11, 4, 2, 2},   // ε=1: 0.30 ≥ C; ε=2: 0.10 < C; at ε=2 t=0.5 (0.8) beats t=0 (0.7), t=1 is over
		{0.05, 8, 4, 3},   // ε=4 is the first below; t=1 (0.05 ≤ C) has the largest E
		{0.10, 8, 4, 3},   // 0.10 is not below 0.10: doubling goes on to ε=4
		{0.005, -1, 0, 0}, // never below: no choice, and a reason
	} {
		s := SelectPaper(pts, "E", "L", c.budget)
		if s.Best != c.best || s.Epsilon != c.eps || s.Feasible != c.feasible {
			t.Errorf("budget %v: %+v, want best %d at ε %v with %d feasible", c.budget, s, c.best, c.eps, c.feasible)
		}
		if s.Best < 0 && s.Why == "" {
			t.Errorf("budget %v: no choice and no reason", c.budget)
		}
	}
	// The grid's arg-max under 0.05 is t=1 at ε=1 (0.99), which the
	// paper's procedure never reaches.
	if best, _ := Select(pts, "E", "L", 0.05); best != 2 {
		t.Errorf("grid arg-max %d, want 2", best)
	}
	if s := SelectPaper(pts[1:3], "E", "L", 0.5); s.Best != -1 || s.Why == "" {
		t.Errorf("without a start setting: %+v", s)
	}
}

func ExampleUtilityLoss() {
	a := UtilityLoss(0.4, 0.82, []string{"train", "test"}, []float64{0.79, 0.7})
	for _, s := range a.Stats {
		fmt.Printf("%s %.2f\n", s.Name, float64(s.Value))
	}
	// Output:
	// E_M 0.40
	// L_M train 0.03
	// L_M test 0.12
	// accuracy train 0.79
	// accuracy test 0.70
	// baseline accuracy 0.82
}

// TestBracket: the bracket of a bisection is the nearest probes on each
// side of the target, whichever probe was returned; a side no probe
// reached is the returned ε itself. It holds the exact crossing of a
// growing function (f(ε) = ε/100 at target 0.3: ε = 30).
func TestBracket(t *testing.T) {
	f := func(e float64) (float64, error) { return e / 100, nil }
	eps, _, trace, ok, err := SearchEpsilon(context.Background(), 0.3, 1, 1000, 0.05, 30, f)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	lo, hi := Bracket(trace, 0.3, eps)
	if !(lo <= 30 && 30 <= hi) || !(lo <= eps && eps <= hi) || lo == hi {
		t.Errorf("bracket [%v, %v] around ε %v, want it to hold 30 and ε", lo, hi, eps)
	}
	for _, p := range trace {
		if p.Epsilon > lo && p.Epsilon < hi && p.Epsilon != eps {
			t.Errorf("probe %v lies inside the bracket [%v, %v]: not the nearest", p.Epsilon, lo, hi)
		}
	}
	if lo, hi := Bracket([]Probe{{1, 0.5}}, 0.3, 1); lo != 1 || hi != 1 {
		t.Errorf("target below every probe: [%v, %v], want [1, 1]", lo, hi)
	}
}

// TestSearchProbes: the search brackets the target from the middle of
// its range before bisecting, so that it spends no probe at the range's
// ends where the target lies well inside (the matched-privacy stage put
// two of six probes at 0.01 and 1000), and reaches smooth targets in
// fewer probes than bisection over the whole range.
func TestSearchProbes(t *testing.T) {
	// bisection over the whole range, both ends first: the search before.
	bisection := func(target, lo, hi, tol float64, f func(float64) (float64, error)) int {
		n := 2
		vlo, _ := f(lo)
		vhi, _ := f(hi)
		if vlo > target || vhi < target {
			return n
		}
		for n < 40 {
			mid := math.Sqrt(lo * hi)
			v, _ := f(mid)
			n++
			if math.Abs(v-target) <= tol*target {
				break
			}
			if v < target {
				lo = mid
			} else {
				hi = mid
			}
		}
		return n
	}
	fs := map[string]func(float64) (float64, error){
		"e/(1+e)":  func(e float64) (float64, error) { return 100 * e / (1 + e), nil },
		"e/100":    func(e float64) (float64, error) { return e, nil },
		"logistic": func(e float64) (float64, error) { return 100 / (1 + math.Exp(-(math.Log(e)-2)*3)), nil },
		"steep":    func(e float64) (float64, error) { return 100 / (1 + math.Exp(-(math.Log(e)-1.5)*12)), nil },
	}
	before, after := 0, 0
	for name, f := range fs {
		for _, target := range []float64{5, 30, 60, 90} {
			_, v, trace, ok, err := SearchEpsilon(context.Background(), target, 0.01, 1000, 0.01, 40, f)
			if err != nil || !ok || math.Abs(v-target) > 0.01*target {
				t.Fatalf("%s, target %v: %v, ok %v, value %v", name, target, err, ok, v)
			}
			before += bisection(target, 0.01, 1000, 0.01, f)
			after += len(trace)
			crossing := 0.0 // where f crosses the target, to 1e-9
			for lo, hi := 0.01, 1000.0; hi/lo > 1+1e-9; {
				mid := math.Sqrt(lo * hi)
				if v, _ := f(mid); v < target {
					lo = mid
				} else {
					hi = mid
				}
				crossing = mid
			}
			for _, p := range trace {
				if (p.Epsilon == 0.01 && crossing > 0.1) || (p.Epsilon == 1000 && crossing < 100) {
					t.Errorf("%s, target %v (crossing at ε %.3g): probed the range's end %v (%v)", name, target, crossing, p.Epsilon, trace)
				}
			}
		}
	}
	if after >= before {
		t.Errorf("%d probes over the cases, bisection over the whole range took %d", after, before)
	}
	t.Logf("%d probes, against %d by bisection over the whole range", after, before)
}
