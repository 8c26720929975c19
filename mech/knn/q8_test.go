package knn

import (
	"math"
	"slices"
	"testing"

	"github.com/sugarme/gotch"
)

// TestInt8BoundIsTight builds the int8 path's worst case: a query q and a
// row a whose every coordinate rounds by almost half a step in the
// direction that overstates the score (q̂ below q, â below a, all
// positive), so the approximate score exceeds the true one by almost the
// bound; a's true score is just below 0, the score of the other row (the
// zero vector, scored exactly). The int8 path must keep a, so its bound
// may understate the worst error by no more than the 1% margin it adds:
// the test fails for a bound 3% too small.
func TestInt8BoundIsTight(t *testing.T) {
	if ok, why := Int8Available(); !ok {
		t.Skipf("SKIP: %s", why)
	}
	const dim = 256
	const eta = 0.001                            // rounding offsets of 0.5 − eta steps
	ts, sa := float32(1.0/127), float32(1.9/127) // grids out of step: a(c) moves one coordinate at a time
	q := make([]float32, dim)
	var qs float64
	for j := range q {
		steps := 127.0 // coordinate 0 sets the scale: max|q| = 127·ts
		if j > 0 {
			steps = float64(40+j%80) + 0.5 - eta
		}
		q[j] = float32(steps * float64(ts))
		qs += float64(q[j])
	}
	// row(c) ≈ c·q on its own grid, every coordinate just below a half step.
	row := func(c float64) (a []float32, trueScore, err float64) {
		a = make([]float32, dim)
		for j := range a {
			e := math.Floor(c * float64(q[j]) / float64(sa))
			if j == 0 {
				e = 127 - 0.5 + eta // rounds to 127: ê₀ = 127·sa, the row's max
			}
			a[j] = float32((e + 0.5 - eta) * float64(sa))
		}
		var n2, dot, dotHat float64
		for j := range a {
			n2 += float64(a[j]) * float64(a[j])
			dot += float64(a[j]) * float64(q[j])
			dotHat += float64(sa) * math.RoundToEven(float64(a[j])/float64(sa)) * float64(ts) * math.RoundToEven(float64(q[j])/float64(ts))
		}
		return a, n2 - 2*dot, 2 * (dot - dotHat)
	}
	var a []float32
	for c := 1.98; c < 2.01; c += 1e-6 {
		r, s, e := row(c)
		if s < 0 && s > -0.01*e {
			a = r
			t.Logf("c = %.5f: true score %.4g, approximation overstates it by %.4g", c, s, e)
			break
		}
	}
	if a == nil {
		t.Fatal("no row with a true score within 1% of the error below 0")
	}
	if slices.Max(a) > 127*sa*(1+1e-6) {
		t.Fatalf("row's max %g above its scale's %g", slices.Max(a), 127*sa)
	}
	data := append(append([]float32(nil), a...), make([]float32, dim)...) // rows: a, 0
	for _, sc := range scorings(t) {
		ix, err := New(data, 2, dim, gotch.CPU, Options{Scoring: sc})
		if err != nil {
			t.Fatal(err)
		}
		ids, _, err := ix.Search(q, 1)
		ix.Close()
		if err != nil {
			t.Fatal(err)
		}
		if ids[0] != 0 {
			t.Errorf("%s: nearest row %d, want 0 (the row whose approximate score is overstated)", sc, ids[0])
		}
	}
}
