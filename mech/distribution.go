package mech

import (
	"context"
	"slices"
)

// Distributions calls f with the exact output distribution of each input
// row: the output rows and their probabilities (summing to 1). For
// SanText+ a non-sensitive word keeps itself with probability 1 − p and
// is otherwise sampled like a sensitive one. Rows are processed in blocks
// sized to the mechanism's memory budget; f may keep neither slice.
func (m *SanText) Distributions(ctx context.Context, rows []int, f func(w int, outs []int32, p []float64) error) error {
	block := int(max(1, m.budget/(8*int64(len(m.outputs)))))
	self := map[int32]int{}
	for j, o := range m.outputs {
		self[o] = j
	}
	return m.withOutputs(func(om *outputMatrix) error {
		for lo := 0; lo < len(rows); lo += block {
			if err := ctx.Err(); err != nil {
				return err
			}
			part := rows[lo:min(len(rows), lo+block)]
			dist, err := om.distances(m.space, part)
			if err != nil {
				return err
			}
			for j, w := range part {
				p := m.weights(dist[j])
				outs := m.outputs
				if !m.sensitive[w] {
					for i := range p {
						p[i] *= m.p
					}
					if k, ok := self[int32(w)]; ok {
						p[k] += 1 - m.p
					} else {
						outs = append(slices.Clip(outs), int32(w))
						p = append(p, 1-m.p)
					}
				}
				if err := f(w, outs, p); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Distributions calls f with the exact output distribution of each input
// row: its output set and the exponential mechanism's probabilities over
// it. A row outside the input vocabulary (or a CusText+ stopword) is
// kept: its distribution is the row itself with probability 1.
func (m *CusText) Distributions(ctx context.Context, rows []int, f func(w int, outs []int32, p []float64) error) error {
	for i, w := range rows {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		p, mapped := m.probs[int32(w)]
		if !mapped || m.stop[m.space.Emb.Words[w]] {
			if err := f(w, []int32{int32(w)}, []float64{1}); err != nil {
				return err
			}
			continue
		}
		if err := f(w, m.mapping.Sets[m.mapping.Of[int32(w)]], p); err != nil {
			return err
		}
	}
	return nil
}
