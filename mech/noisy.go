package mech

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/mech/knn"
	"github.com/xp-nlp/xp/metrics"
)

// noisyNN is the shared driver of the mechanisms that perturb a word's
// vector and search the nearest candidates of the noisy vector (Laplace,
// Vickrey, Mahalanobis): they embed it, and its Privatize and Draws are
// theirs. Each token's stream first draws the noise, then whatever pick
// needs, so batching cannot change a result.
type noisyNN struct {
	self  Mechanism // the mechanism that embeds this driver (its report names it)
	space *Space
	k     int // neighbours searched
	batch int // tokens per search
	eps   float64
	// noise names the noise drawn (laplace, or mahalanobis with its λ):
	// mechanisms with the same noise, space and ε may share their draws'
	// searches (SharedDraws).
	noise string
	// mix, when set, multiplies a noise row in place (scratch: dim
	// values of its own) before it is added to the word's vector
	// (Mahalanobis).
	mix func(z, scratch []float64)
	// pick chooses the output row among the k nearest (ids, distances).
	pick func(r *rand.Rand, w int, ids []int32, dist []float64) int32
	// progress receives a bar over tokens when it is a terminal.
	progress io.Writer
	// pruned counts the draws answered from the word's list (prune.go).
	pruned int64
}

// token is one in-vocabulary token to perturb: its row and its stream
// (r reads src; after the noise, a copy of src's state gives another pick
// the same randomness: SharedDraws).
type token struct {
	w   int
	src *rand.PCG
	r   *rand.Rand
}

func newToken(w int, base uint64, example, position int) token {
	p := tokenPCG(base, example, position)
	return token{w, p, rand.New(p)}
}

// perturb searches the neighbours of the tokens next yields (in order,
// until it returns false) in batches of m.batch searches, calling emit
// with each token's sequence number, the token (its stream after the
// noise) and its m.k nearest candidates, from which the caller picks the
// output (m.pick). It is the one place where the noise of
// Laplace, Vickrey and Mahalanobis is drawn and the neighbour searched.
// With words (Draws'), a token whose answer provably lies among its
// word's nearest candidates is answered from them (prune.go): the same
// output, without the full search; the first batch that needs a list
// searches the lists of all of words.rows not kept yet, at once (one
// search of many rows instead of one per batch). On an index that uses
// them (knn's UsesNear), every search is told the rows near its tokens
// (knn.Index.SearchNear: the same answer, sooner): their word's nearest
// candidates where words.seed, else, for the nearest candidate alone
// (k = 1), the word itself. One
// batch's search runs while the next batch is drawn and the previous
// one's outputs are picked and emitted (on a GPU the host's share of a
// batch was a quarter of its time: docs/gpu.md); emit is called in
// order, from the caller's goroutine.
func (m *noisyNN) perturb(ctx context.Context, next func() (token, bool), emit func(seq int, t token, ids []int32, dist []float64) error, bar *progress.Bar, words *wordDraws) error {
	size := m.batch
	if size <= 0 {
		size = 1024
	}
	var flying *nnBatch // its search runs
	var spare *nnBatch  // landed: its buffers serve the next batch
	var z []float64     // a batch's noise
	defer func() {
		if flying != nil {
			<-flying.done // nothing outlives perturb
		}
	}()
	seq := 0
	// land waits for the flying batch's search and emits its outputs.
	land := func() error {
		b := flying
		if b == nil {
			return nil
		}
		err := <-b.done
		flying = nil
		if err != nil {
			return err
		}
		for j, t := range b.todo {
			if err := emit(seq, t, b.ids[j*m.k:(j+1)*m.k], b.dist[j*m.k:(j+1)*m.k]); err != nil {
				return err
			}
			seq++
		}
		bar.Add(int64(len(b.todo)))
		spare = b
		return nil
	}
	for {
		todo := make([]token, 0, size)
		for len(todo) < size {
			t, ok := next()
			if !ok {
				break
			}
			todo = append(todo, t)
		}
		if len(todo) == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if n := len(todo) * m.space.Emb.Dim; cap(z) < n {
			z = make([]float64, n)
		}
		b, err := m.draw(todo, words, z, spare)
		spare = nil
		if err != nil {
			return err
		}
		if err := land(); err != nil {
			return err
		}
		b.fly(m.space.Index, m.k)
		flying = b
		if len(todo) < size {
			break
		}
	}
	return land()
}

// nnBatch is a batch of tokens between its noise and its outputs.
type nnBatch struct {
	todo   []token
	q      []float32 // the noisy vectors, float32, a row per token
	ids    []int32   // each token's k nearest, once answered
	dist   []float64
	search []int      // the tokens the lists could not answer
	near   [][]int32  // rows near each of them (knn.Index.SearchNear)
	done   chan error // the search's end
}

// wordDraws is perturb's word-level mode (Draws): the rows its tokens'
// words come from, and whether each search is seeded from its word's
// list (seed), which pays for the list's search where a word is drawn at
// least seedDraws times and the index uses the seed (knn's UsesNear).
type wordDraws struct {
	rows []int
	seed bool
}

// nearRows is how many rows of a word's list a search of its draw is
// told are near (knn.Index.SearchNear): int8-avx2's scan starts from the
// k-th smallest bound on their scores. Seeded with 16 rows, int8-avx2's
// scan is faster on the fastText 300d vectors (knn's BenchmarkSeed,
// docs/performance.md).
const nearRows = 16

// seedDraws is the fewest draws of a word for which its list is searched
// to seed the searches of its draws: a list (256 neighbours) costs about
// as much as four draws on the 300d vectors, and saves up to about 7% of
// each draw's search (at ε = 25; nothing at ε ≤ 10: docs/performance.md).
const seedDraws = 64

// draw draws the batch's noise into z (each token's from its own stream,
// so drawing on every core gives what drawing in turn would) and, with
// words (perturb's), answers the tokens it can from their words' lists.
// It takes spare's buffers where they are large enough (every value is
// written before it is read).
func (m *noisyNN) draw(todo []token, words *wordDraws, z []float64, spare *nnBatch) (*nnBatch, error) {
	dim := m.space.Emb.Dim
	b := &nnBatch{todo: todo}
	if spare != nil && cap(spare.q) >= len(todo)*dim && cap(spare.ids) >= len(todo)*m.k {
		b.q, b.ids, b.dist = spare.q[:len(todo)*dim], spare.ids[:len(todo)*m.k], spare.dist[:len(todo)*m.k]
	} else {
		b.q, b.ids, b.dist = make([]float32, len(todo)*dim), make([]int32, len(todo)*m.k), make([]float64, len(todo)*m.k)
	}
	z = z[:len(todo)*dim]
	q := b.q
	split(len(todo), func(lo, hi int) {
		var scratch []float64
		if m.mix != nil {
			scratch = make([]float64, dim)
		}
		for j := lo; j < hi; j++ {
			zj := z[j*dim : (j+1)*dim]
			laplaceNoise(todo[j].r, m.eps, zj)
			if m.mix != nil {
				m.mix(zj, scratch)
			}
			v := m.space.Emb.Vector(todo[j].w)
			for i := range v {
				q[j*dim+i] = float32(float64(v[i]) + zj[i])
			}
		}
	})
	usesNear := m.space.Index.UsesNear()
	seed := words != nil && words.seed && usesNear
	may := make([]bool, len(todo))
	var rows []int
	if words != nil {
		for j, t := range todo {
			may[j] = m.space.mayPrune(t.w, q[j*dim:(j+1)*dim])
			if may[j] || seed {
				rows = append(rows, t.w)
			}
		}
	}
	var lists []neighbourList
	if len(rows) > 0 {
		var err error
		if lists, err = m.space.neighbours(rows, words.rows); err != nil {
			return nil, err
		}
	}
	var own []int32 // the tokens' own words, one array for the batch
	if usesNear && !seed && m.k == 1 {
		own = make([]int32, len(todo))
	}
	for j, t := range todo {
		var l neighbourList
		if may[j] || seed {
			l, lists = lists[0], lists[1:]
		}
		if may[j] && pruned(m.space, l, t.w, q[j*dim:(j+1)*dim], m.k, b.ids[j*m.k:(j+1)*m.k], b.dist[j*m.k:(j+1)*m.k]) {
			m.pruned++
			continue
		}
		b.search = append(b.search, j)
		switch {
		case seed:
			b.near = append(b.near, l.ids[:min(len(l.ids), max(nearRows, m.k))])
		case own != nil:
			own[j] = int32(t.w)
			b.near = append(b.near, own[j:j+1:j+1])
		}
	}
	return b, nil
}

// fly starts the search of the tokens the lists did not answer; done
// receives its error (nil when it wrote their answers).
func (b *nnBatch) fly(ix *knn.Index, k int) {
	b.done = make(chan error, 1)
	if len(b.search) == 0 {
		b.done <- nil
		return
	}
	dim := ix.Dim()
	go func() {
		qs := b.q
		if len(b.search) < len(b.todo) {
			qs = make([]float32, 0, len(b.search)*dim)
			for _, j := range b.search {
				qs = append(qs, b.q[j*dim:(j+1)*dim]...)
			}
		}
		sid, sdist, err := ix.SearchNear(qs, k, nil, b.near)
		if err == nil {
			for i, j := range b.search {
				copy(b.ids[j*k:(j+1)*k], sid[i*k:(i+1)*k])
				copy(b.dist[j*k:(j+1)*k], sdist[i*k:(i+1)*k])
			}
		}
		b.done <- err
	}()
}

// Privatize privatizes docs under src (Mechanism.Privatize).
func (m *noisyNN) Privatize(ctx context.Context, docs [][]string, src Source) ([][]string, metrics.Privatization, error) {
	outs, reps, err := m.privatize(ctx, []*noisyNN{m}, docs, src)
	if err != nil {
		return nil, reps[0], err
	}
	return outs[0], reps[0], nil
}

// SharedPrivatize is Privatize of several mechanisms that draw the same
// noise from the same source (as SharedDraws): each token's noise is
// drawn and its neighbours searched once, as many as the most demanding
// of ms needs, and each mechanism picks its output with its own copy of
// the token's stream as it stood after the noise. outs[c] and reps[c]
// equal ms[c].Privatize(ctx, docs, src)'s bit for bit. Mechanisms that
// draw other noise, or none, are refused.
func SharedPrivatize(ctx context.Context, ms []Mechanism, docs [][]string, src Source) (outs [][][]string, reps []metrics.Privatization, err error) {
	nns, err := sharing("shared privatization", ms)
	if err != nil || len(nns) == 0 {
		return nil, nil, err
	}
	return nns[0].privatize(ctx, nns, docs, src)
}

func (m *noisyNN) setProgress(w io.Writer) { m.progress = w }

// Epsilon is the mechanism's ε.
func (m *noisyNN) Epsilon() float64 { return m.eps }

// privatize is Privatize for the mechanisms picks, whose noise is m's:
// one search of the most neighbours any of them takes per token, and
// each one's output and report.
func (m *noisyNN) privatize(ctx context.Context, picks []*noisyNN, docs [][]string, src Source) ([][][]string, []metrics.Privatization, error) {
	outs := make([][][]string, len(picks))
	reps := make([]metrics.Privatization, len(picks))
	for c, p := range picks {
		outs[c] = make([][]string, len(docs))
		for i, d := range docs {
			outs[c][i] = append([]string(nil), d...)
		}
		reps[c] = newReport(p.self, p.space)
	}
	d := *m // the searching driver: m's noise, the largest k
	for _, p := range picks {
		d.k = max(d.k, p.k)
	}
	base := src.base()
	bar := progress.New(m.progress, tokenCount(docs), "privatize", false)
	defer bar.Finish()
	// where[seq] is the (document, position) of the seq-th token searched.
	type at struct{ doc, pos int }
	var where []at
	var tokens, oov int64
	di, pi := 0, 0
	next := func() (token, bool) {
		for di < len(docs) {
			if pi == len(docs[di]) {
				di, pi = di+1, 0
				continue
			}
			d, p := di, pi
			pi++
			tokens++
			w, ok := m.space.Emb.Index(docs[d][p])
			if !ok {
				oov++
				bar.Add(1)
				continue
			}
			where = append(where, at{d, p})
			return newToken(w, base, d, p), true
		}
		return token{}, false
	}
	emit := func(seq int, t token, ids []int32, dist []float64) error {
		pickEach(picks, t, ids, dist, func(c int, o int32) {
			if int(o) == t.w {
				reps[c].Unchanged++
			}
			outs[c][where[seq].doc][where[seq].pos] = m.space.Emb.Words[o]
		})
		return nil
	}
	before := m.space.Index.Stats().Fallbacks
	err := d.perturb(ctx, next, emit, bar, nil)
	for c := range reps {
		reps[c].Tokens, reps[c].OOV = tokens, oov
		reps[c].Fallbacks = m.space.Index.Stats().Fallbacks - before
	}
	if err != nil {
		return nil, reps, err
	}
	return outs, reps, nil
}

// Draws privatizes each of rows n times in shared search batches (each
// draw pruned to its word's nearest candidates where the noise is small
// enough: prune.go; its search otherwise told those candidates, from
// seedDraws draws a word: perturb) and calls f with each row's outputs.
// Draw j of row w uses the stream that Privatize gives document j,
// position 0, under src with Split "word <w>" (WordSource): the outputs
// equal n single-token Privatize calls per word, and a word's draws do
// not depend on the other rows. outs is reused for the next row: f copies what it keeps.
func (m *noisyNN) Draws(ctx context.Context, rows []int, n int, src Source, f func(i int, outs []int32) error) error {
	return m.draws(ctx, []*noisyNN{m}, rows, n, src, func(_, i int, outs []int32) error { return f(i, outs) })
}

// SharedDraws is Draws of several mechanisms that draw the same noise
// from the same source: Laplace and Vickrey's variants at one ε, or
// Mahalanobis and Vickrey with the same λ, over one space. Each draw's
// noise is drawn and its neighbours searched once, as many as the most
// demanding of ms needs, and each mechanism picks its output from them
// with its own copy of the stream as it stood after the noise. f is
// called with mechanism c's outputs of row i (all of row i's before row
// i+1's); they equal ms[c].Draws(ctx, rows, n, src, …)'s bit for bit.
// Mechanisms that draw other noise, or none, are refused.
func SharedDraws(ctx context.Context, ms []Mechanism, rows []int, n int, src Source, f func(c, i int, outs []int32) error) error {
	nns, err := sharing("shared draws", ms)
	if err != nil || len(nns) == 0 {
		return err
	}
	return nns[0].draws(ctx, nns, rows, n, src, f)
}

// sharing is the drivers of ms, which must draw one noise (the same
// space, ε and noise: SharedDraws, SharedPrivatize); what names the
// caller in its errors.
func sharing(what string, ms []Mechanism) ([]*noisyNN, error) {
	nns := make([]*noisyNN, len(ms))
	for c, m := range ms {
		d, ok := m.(interface{ driver() *noisyNN })
		if !ok {
			return nil, fmt.Errorf("%s: %s draws no noise to share", what, m.Name())
		}
		nns[c] = d.driver()
		if a, b := nns[0], nns[c]; a.space != b.space || a.eps != b.eps || a.noise != b.noise {
			return nil, fmt.Errorf("%s: %s (%s noise, ε = %g) and %s (%s noise, ε = %g) draw different noise", what, ms[0].Name(), a.noise, a.eps, m.Name(), b.noise, b.eps)
		}
	}
	return nns, nil
}

func (m *noisyNN) driver() *noisyNN { return m }

// draws is Draws for the mechanisms picks, whose noise is m's: one
// search of the most neighbours any of them takes per draw.
func (m *noisyNN) draws(ctx context.Context, picks []*noisyNN, rows []int, n int, src Source, f func(c, i int, outs []int32) error) error {
	if n <= 0 || len(rows) == 0 {
		return nil
	}
	d := *m // the searching driver: m's noise, the largest k
	d.pruned = 0
	for _, p := range picks {
		d.k = max(d.k, p.k)
	}
	defer func() { m.pruned += d.pruned }()
	bar := progress.New(m.progress, int64(len(rows)*n), "draws", false)
	defer bar.Finish()
	outs := make([][]int32, len(picks))
	for c := range outs {
		outs[c] = make([]int32, n)
	}
	var base uint64
	i, j := 0, 0
	next := func() (token, bool) {
		if i*n+j >= len(rows)*n {
			return token{}, false
		}
		if j == 0 {
			base = WordSource(src, m.space.Emb.Words[rows[i]]).base()
		}
		t := newToken(rows[i], base, j, 0)
		if j++; j == n {
			i, j = i+1, 0
		}
		return t, true
	}
	emit := func(seq int, t token, ids []int32, dist []float64) error {
		pickEach(picks, t, ids, dist, func(c int, o int32) { outs[c][seq%n] = o })
		if seq%n == n-1 {
			for c := range picks {
				if err := f(c, seq/n, outs[c]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return d.perturb(ctx, next, emit, bar, &wordDraws{rows: rows, seed: n >= seedDraws})
}

// pickEach has each of picks choose token t's output among its nearest
// candidates (ids, dist: as many as the most demanding pick takes), each
// with its own copy of t's stream as it stood after the noise (the last
// reads the stream itself), and calls f with each choice in turn.
func pickEach(picks []*noisyNN, t token, ids []int32, dist []float64, f func(c int, o int32)) {
	last := len(picks) - 1
	for c, p := range picks {
		r := t.r
		if c < last {
			st := *t.src
			r = rand.New(&st)
		}
		f(c, p.pick(r, t.w, ids[:p.k], dist[:p.k]))
	}
}

// WordSource is the source of a word's draws in word-level analyses: src
// with Split "word <w>".
func WordSource(src Source, w string) Source {
	src.Split = "word " + w
	return src
}

// nearest is pick for Laplace and Mahalanobis: the nearest candidate.
func nearest(_ *rand.Rand, _ int, ids []int32, _ []float64) int32 { return ids[0] }
