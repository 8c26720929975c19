package analysis

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/mech/mechtest"
)

// TestExamplesCosine: the examples' cosine to input is the draw-weighted
// mean cosine of the outputs it lists (recomputed here from the lists),
// 1 where every draw is returned unchanged, and lower where the noise is
// large.
func TestExamplesCosine(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	e := &embedding.Embedding{Dim: 5, Format: "test", Source: "examples"}
	idx := map[string]int{}
	for i := range 60 {
		w := "w" + strconv.Itoa(i)
		idx[w] = i
		e.Words = append(e.Words, w)
		for range 5 {
			e.Data = append(e.Data, float32(r.NormFloat64()))
		}
	}
	s := mechtest.Space(t, e)
	list := []string{"w1", "w7", "w30"}
	raw := map[string]any{"list": list, "draws": 200}
	cos := map[float64]float64{}
	for _, eps := range []float64{0.5, 1e6} {
		lap, err := mech.New("laplace", s, eps, nil, mech.Options{})
		if err != nil {
			t.Fatal(err)
		}
		env := Env{Space: s, Seed: 3, Mech: lap, Source: mech.Source{Seed: 3, Cell: "examples"}}
		a, err := Run(context.Background(), "examples", raw, env)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		var n int
		for _, w := range list {
			for _, item := range a.Examples[w] {
				word, count, ok := strings.Cut(item, " ×")
				c, err := strconv.Atoi(count)
				if !ok || err != nil {
					t.Fatalf("ε %v: example %q", eps, item)
				}
				sum += float64(c) * mech.Cosine(e.Vector(idx[w]), e.Vector(idx[word]))
				n += c
			}
		}
		if n != 200*len(list) {
			t.Fatalf("ε %v: %d draws listed, want %d", eps, n, 200*len(list))
		}
		cos[eps] = a.Stat("cosine to input")
		if math.Abs(cos[eps]-sum/float64(n)) > 1e-12 {
			t.Errorf("ε %v: cosine to input %v, from the lists %v", eps, cos[eps], sum/float64(n))
		}
	}
	if cos[1e6] != 1 {
		t.Errorf("ε 1e6: cosine to input %v, want 1 (every draw unchanged)", cos[1e6])
	}
	if cos[0.5] > 0.8 {
		t.Errorf("ε 0.5: cosine to input %v, want the noise to move most draws far", cos[0.5])
	}
}
