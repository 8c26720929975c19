package mech

import (
	"context"
	"io"
	"math/rand/v2"

	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/metrics"
)

// noisyNN is the shared driver of the mechanisms that perturb a word's
// vector and search the nearest candidates of the noisy vector (Laplace,
// Vickrey, Mahalanobis). Each token's stream first draws the noise, then
// whatever pick needs, so batching cannot change a result.
type noisyNN struct {
	space *Space
	k     int // neighbours searched
	batch int // tokens per search
	eps   float64
	// mix, when set, multiplies a batch of noise rows (b × dim, row-major)
	// in place before they are added to the words' vectors (Mahalanobis).
	mix func(z []float64)
	// pick chooses the output row among the k nearest (ids, distances).
	pick func(r *rand.Rand, w int, ids []int32, dist []float64) int32
	// progress receives a bar over tokens when it is a terminal.
	progress io.Writer
}

type pending struct {
	doc, pos int
	w        int
	r        *rand.Rand
}

func (m *noisyNN) run(ctx context.Context, docs [][]string, src Source, rep *metrics.Privatization) ([][]string, error) {
	out := make([][]string, len(docs))
	for i, d := range docs {
		out[i] = append([]string(nil), d...)
	}
	batch := m.batch
	if batch <= 0 {
		batch = 1024
	}
	dim := m.space.Emb.Dim
	base := src.base()
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	bar := progress.New(m.progress, int64(total), "privatize", false)
	defer bar.Finish()
	var todo []pending
	z := make([]float64, 0, batch*dim)
	q := make([]float32, batch*dim)
	flush := func() error {
		if len(todo) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if m.mix != nil {
			m.mix(z)
		}
		q = q[:len(z)]
		for j, p := range todo {
			v := m.space.Emb.Vector(p.w)
			for i := range v {
				q[j*dim+i] = float32(float64(v[i]) + z[j*dim+i])
			}
		}
		ids, dist, err := m.space.Index.Search(q, m.k)
		if err != nil {
			return err
		}
		for j, p := range todo {
			o := m.pick(p.r, p.w, ids[j*m.k:(j+1)*m.k], dist[j*m.k:(j+1)*m.k])
			if int(o) == p.w {
				rep.Unchanged++
			}
			out[p.doc][p.pos] = m.space.Emb.Words[o]
		}
		bar.Add(int64(len(todo)))
		todo, z = todo[:0], z[:0]
		return nil
	}
	before := m.space.Index.Stats().Fallbacks
	for di, d := range docs {
		for pi, tok := range d {
			rep.Tokens++
			w, ok := m.space.Emb.Index(tok)
			if !ok {
				rep.OOV++
				continue
			}
			r := tokenRand(base, di, pi)
			z = z[:len(z)+dim]
			LaplaceNoise(r, m.eps, z[len(z)-dim:])
			todo = append(todo, pending{di, pi, w, r})
			if len(todo) == batch {
				if err := flush(); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	rep.Fallbacks = m.space.Index.Stats().Fallbacks - before
	return out, nil
}

// nearest is pick for Laplace and Mahalanobis: the nearest candidate.
func nearest(_ *rand.Rand, _ int, ids []int32, _ []float64) int32 { return ids[0] }
