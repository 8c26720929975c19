package datasets

import (
	"github.com/go-gota/gota/dataframe"
	"github.com/go-gota/gota/series"
)

// Summary tabulates the dataset: one row per split and label with the
// number of examples and their mean length in characters (unlabelled
// examples under the label "-").
func (d *Dataset) Summary() dataframe.DataFrame {
	var split, label []string
	var count []int
	var chars []float64
	for _, s := range d.SplitNames() {
		n := map[int]int{}
		c := map[int]int{}
		for _, e := range d.Splits[s] {
			n[e.Label]++
			c[e.Label] += len(e.Text) + len(e.Text2)
		}
		for l := Unlabelled; l < len(d.Labels); l++ {
			if n[l] == 0 {
				continue
			}
			name := "-"
			if l >= 0 {
				name = d.Labels[l]
			}
			split, label, count = append(split, s), append(label, name), append(count, n[l])
			chars = append(chars, float64(c[l])/float64(n[l]))
		}
	}
	return dataframe.New(
		series.New(split, series.String, "split"),
		series.New(label, series.String, "label"),
		series.New(count, series.Int, "examples"),
		series.New(chars, series.Float, "mean_chars"),
	)
}
