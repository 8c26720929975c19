package mech

import (
	"slices"
	"testing"
)

// TestSpaceKeepsMappings: CusText at several ε on one space builds its
// mapping and its members' scores once (the second ε reads the kept
// mapping: the same one, not a decoded copy), and every distribution is
// bit for bit the one a space that keeps nothing computes; a space keeps
// at most keptMappings mappings, the least recently used leaving first.
func TestSpaceKeepsMappings(t *testing.T) {
	for _, score := range []string{"cosine", "euclidean"} {
		s := tinySpace(t, 80, 4, 21, 1)
		counts := allCounts(s)
		p := CusTextParams{K: 5, Score: score}
		first, err := NewCusText(s, 1, p, counts)
		if err != nil {
			t.Fatal(err)
		}
		for _, eps := range []float64{1, 3, 8} {
			kept, err := NewCusText(s, eps, p, counts)
			if err != nil {
				t.Fatal(err)
			}
			if kept.mapping != first.mapping {
				t.Errorf("%s ε = %g: the mapping was not kept", score, eps)
			}
			fresh := tinySpace(t, 80, 4, 21, 1) // the same vectors, nothing kept
			want, err := NewCusText(fresh, eps, p, counts)
			if err != nil {
				t.Fatal(err)
			}
			for x, pw := range want.probs {
				if !slices.Equal(kept.probs[x], pw) {
					t.Fatalf("%s ε = %g: row %d: %v, want %v", score, eps, x, kept.probs[x], pw)
				}
			}
			if len(kept.probs) != len(want.probs) {
				t.Errorf("%s ε = %g: %d rows, want %d", score, eps, len(kept.probs), len(want.probs))
			}
		}
		cos := s.MemberCosines(first.mapping)
		for _, x := range first.mapping.Order {
			si := first.mapping.Of[x]
			for j, y := range first.mapping.Sets[si] {
				if c := Cosine(s.Emb.Vector(int(x)), s.Emb.Vector(int(y))); cos[x][j] != c {
					t.Fatalf("%s: cosine of %d and %d kept as %v, want %v", score, x, y, cos[x][j], c)
				}
			}
		}
	}

	s := tinySpace(t, 80, 4, 21, 1)
	counts := allCounts(s)
	var maps []*Mapping
	for k := 2; k < 2+keptMappings+1; k++ {
		m, err := NewCusText(s, 1, CusTextParams{K: k}, counts)
		if err != nil {
			t.Fatal(err)
		}
		maps = append(maps, m.mapping)
	}
	if len(s.maps) != keptMappings || s.maps[0].mp != maps[1] || s.maps[keptMappings-1].mp != maps[keptMappings] {
		t.Errorf("kept %d mappings, want the last %d", len(s.maps), keptMappings)
	}
	again, err := NewCusText(s, 2, CusTextParams{K: 2}, counts) // left: built again
	if err != nil {
		t.Fatal(err)
	}
	if again.mapping == maps[0] || !slices.EqualFunc(again.mapping.Sets, maps[0].Sets, slices.Equal) {
		t.Error("a mapping that left was not built again as it was")
	}
}
