package metrics

import "fmt"

// Classification summarises predictions against gold labels.
type Classification struct {
	N        int          `json:"n"`
	Accuracy float64      `json:"accuracy"`
	MacroF1  float64      `json:"macro_f1"`
	PerClass []ClassScore `json:"per_class"`
	// Correct is, per example in the split's order, '1' where the
	// prediction was right and '0' where not: what a paired per-example
	// test (stats.SignFlip) against another model on the same examples reads.
	Correct string `json:"correct,omitempty"`
}

// ClassScore is one class's precision, recall and F1 (0 where undefined:
// no prediction or no gold example of the class), and its gold count.
type ClassScore struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	Support   int     `json:"support"`
}

// Score computes accuracy, per-class scores and their unweighted mean F1
// over classes labels 0 … classes−1.
func Score(gold, pred []int64, classes int) (Classification, error) {
	if len(gold) != len(pred) {
		return Classification{}, fmt.Errorf("metrics: %d gold labels, %d predictions", len(gold), len(pred))
	}
	tp := make([]int, classes)
	fp := make([]int, classes)
	fn := make([]int, classes)
	m := Classification{N: len(gold), PerClass: make([]ClassScore, classes)}
	right := 0
	correct := make([]byte, len(gold))
	for i, g := range gold {
		p := pred[i]
		if g < 0 || int(g) >= classes || p < 0 || int(p) >= classes {
			return Classification{}, fmt.Errorf("metrics: label %d or prediction %d outside 0 … %d", g, p, classes-1)
		}
		m.PerClass[g].Support++
		correct[i] = '0'
		if g == p {
			correct[i] = '1'
			right++
			tp[g]++
		} else {
			fp[p]++
			fn[g]++
		}
	}
	if len(gold) > 0 {
		m.Accuracy = float64(right) / float64(len(gold))
	}
	m.Correct = string(correct)
	for c := range m.PerClass {
		s := &m.PerClass[c]
		if tp[c]+fp[c] > 0 {
			s.Precision = float64(tp[c]) / float64(tp[c]+fp[c])
		}
		if tp[c]+fn[c] > 0 {
			s.Recall = float64(tp[c]) / float64(tp[c]+fn[c])
		}
		if s.Precision+s.Recall > 0 {
			s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
		}
		m.MacroF1 += s.F1 / float64(classes)
	}
	return m, nil
}

// Epoch describes one training epoch.
type Epoch struct {
	Epoch          int            `json:"epoch"`
	Loss           float64        `json:"loss"` // mean training loss
	Valid          Classification `json:"valid"`
	ExamplesPerSec float64        `json:"examples_per_sec"`
}
