package mech

import "testing"

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		eps  float64
		p    Params
		ok   bool
	}{
		{"laplace", 1, nil, true},
		{"laplace", 0, nil, false},
		{"laplace", -2, nil, false},
		{"nope", 1, nil, false},
		{"laplace", 1, Params{"t": 0.5}, false},
		{"vickrey", 1, Params{"t": 0.5}, true},
		{"vickrey", 1, Params{"t": 1.5}, false},
		{"vickrey", 1, Params{"t": "x"}, false},
		{"vickrey", 1, Params{"t_r": []any{0.2, 2.0}}, false},
		{"mahalanobis", 1, Params{"lambda": 0.2}, true},
		{"mahalanobis", 1, Params{"lambda": -0.1}, false},
		{"custext", 1, Params{"k": 0}, false},
		{"custext", 1, Params{"k": 20, "mapping": "balanced", "strategy": "record"}, true},
		{"custext", 1, Params{"mapping": "greedy"}, false},
		{"santext+", 1, Params{"sensitive": 0.0}, false},
	} {
		err := Check(c.name, c.eps, c.p)
		if (err == nil) != c.ok {
			t.Errorf("Check(%s, %v, %v) = %v, want ok=%v", c.name, c.eps, c.p, err, c.ok)
		}
	}
}
