package metrics

import (
	"math"
	"testing"
)

func TestScore(t *testing.T) {
	cases := []struct {
		gold, pred []int64
		classes    int
		acc, f1    float64
	}{
		{[]int64{0, 1, 1, 0}, []int64{0, 1, 1, 0}, 2, 1, 1},
		// class 0: tp 1 fp 1 fn 1 → P=R=F1=0.5; class 1: tp 1, fp 1, fn 1 → 0.5
		{[]int64{0, 0, 1, 1}, []int64{0, 1, 0, 1}, 2, 0.5, 0.5},
		// all predicted 0: class 0 P=2/4 R=1 F1=2/3; class 1 F1=0
		{[]int64{0, 0, 1, 1}, []int64{0, 0, 0, 0}, 2, 0.5, 1.0 / 3},
		// a class never seen nor predicted counts as F1 0 in the macro mean
		{[]int64{0, 1}, []int64{0, 1}, 3, 1, 2.0 / 3},
	}
	for _, c := range cases {
		m, err := Score(c.gold, c.pred, c.classes)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(m.Accuracy-c.acc) > 1e-12 || math.Abs(m.MacroF1-c.f1) > 1e-12 {
			t.Errorf("%v vs %v: accuracy %v macro-F1 %v, want %v %v", c.gold, c.pred, m.Accuracy, m.MacroF1, c.acc, c.f1)
		}
	}
	if _, err := Score([]int64{0}, []int64{0, 1}, 2); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := Score([]int64{2}, []int64{0}, 2); err == nil {
		t.Error("label out of range accepted")
	}
}
