package knn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// TestSmallest: the float32 path's selection takes each row's kc smallest
// scores in ascending order, equal scores by the lower column (a sort by
// (score, column) is the reference, NaN after every other score), with
// many ties, +∞ rows, NaN and kc from 1 to the row's length.
func TestSmallest(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, c := range []struct {
		name   string
		nq, n  int
		kc     int
		levels int // scores drawn from this many values (ties)
		inf    float64
		nan    float64
	}{
		{"distinct", 40, 1000, 10, 0, 0, 0},
		{"ties", 40, 1000, 10, 7, 0, 0},
		{"inf", 20, 300, 30, 0, 0.5, 0},
		{"nan", 20, 300, 30, 0, 0, 0.3},
		{"mostly-nan", 20, 40, 30, 0, 0, 0.9},
		{"kc=n", 5, 50, 50, 4, 0.1, 0},
		{"kc=1", 33, 500, 1, 3, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := make([]float32, c.nq*c.n)
			for i := range s {
				v := float32(r.NormFloat64())
				if c.levels > 0 {
					v = float32(r.IntN(c.levels))
				}
				switch u := r.Float64(); {
				case u < c.inf:
					v = float32(math.Inf(1))
				case u < c.inf+c.nan:
					v = float32(math.NaN())
				}
				s[i] = v
			}
			vals, idx := make([]float32, c.nq*c.kc), make([]int64, c.nq*c.kc)
			smallest(unsafe.Pointer(&s[0]), c.nq, c.n, c.kc, vals, idx)
			for i := 0; i < c.nq; i++ {
				row := s[i*c.n : (i+1)*c.n]
				order := make([]int64, c.n)
				for j := range order {
					order[j] = int64(j)
				}
				nan := func(j int64) bool { return math.IsNaN(float64(row[j])) }
				slices.SortStableFunc(order, func(a, b int64) int {
					switch {
					case nan(a) && nan(b):
						return 0
					case nan(a):
						return 1
					case nan(b):
						return -1
					case row[a] < row[b]:
						return -1
					case row[a] > row[b]:
						return 1
					}
					return 0
				})
				for j := 0; j < c.kc; j++ {
					if idx[i*c.kc+j] != order[j] || math.Float32bits(vals[i*c.kc+j]) != math.Float32bits(row[order[j]]) {
						t.Fatalf("row %d rank %d: got column %d (%g), want %d (%g)", i, j, idx[i*c.kc+j], vals[i*c.kc+j], order[j], row[order[j]])
					}
				}
			}
		})
	}
}
