package mech

import (
	"math"
	"math/rand/v2"
)

// laplaceNoise writes into z (length n) a draw from the multivariate
// Laplace density ∝ exp(−ε‖z‖) (Feyisetan et al. 2020, Algorithm 1):
// z = l·v with v = g/‖g‖, g ~ N(0, I_n) a uniform direction and
// l ~ Gamma(shape n, scale 1/ε), so E‖z‖ = n/ε. This is where ε scales
// the noise of Laplace, Vickrey and Mahalanobis.
func laplaceNoise(r *rand.Rand, eps float64, z []float64) {
	var norm2 float64
	for i := range z {
		g := r.NormFloat64()
		z[i] = g
		norm2 += g * g
	}
	l := gammaDraw(r, float64(len(z))) / eps
	s := l / math.Sqrt(norm2)
	for i := range z {
		z[i] *= s
	}
}

// gammaDraw draws from Gamma(shape a, scale 1) for a ≥ 1 (Marsaglia & Tsang
// 2000), using only r.
func gammaDraw(r *rand.Rand, a float64) float64 {
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		var x, v float64
		for {
			x = r.NormFloat64()
			v = 1 + c*x
			if v > 0 {
				break
			}
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
