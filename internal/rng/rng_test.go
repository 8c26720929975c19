package rng

import "testing"

// The reference values are SplitMix64's published outputs for the state
// sequence starting at 0 (the generator's first three outputs).
func TestSplitMix64(t *testing.T) {
	state := uint64(0)
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := SplitMix64(state); got != want {
			t.Errorf("output %d: %#x, want %#x", i, got, want)
		}
		state += 0x9e3779b97f4a7c15
	}
}

func TestHashSeparatesNames(t *testing.T) {
	seen := map[uint64]string{}
	for _, c := range []struct {
		seed  uint64
		names []string
	}{{1, []string{"ab", "c"}}, {1, []string{"a", "bc"}}, {2, []string{"ab", "c"}}, {1, []string{"abc"}}, {1, nil}} {
		h := Hash(c.seed, c.names...)
		if prev, dup := seen[h]; dup {
			t.Errorf("Hash(%d, %q) collides with %s", c.seed, c.names, prev)
		}
		seen[h] = ""
	}
	if Hash(7, "x") != Hash(7, "x") {
		t.Error("Hash is not a function")
	}
}
