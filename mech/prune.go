package mech

import (
	"math"
	"slices"
	"sort"

	"github.com/xp-nlp/xp/mech/knn"
)

// Exact pruning of a draw's search (word-level draws, noisyNN.draws).
//
// A draw searches the k nearest candidates of q, the float32 vector of
// φ(w) + z. With r = ‖q − φ(w)‖ and d_j the distance from φ(w) to its
// j-th nearest candidate (d_0 = 0: w itself), the k candidates w, n_1 …
// n_{k−1} all lie within r + d_{k−1} of q, so q's k nearest (and any
// candidate tied with the k-th) do too, and so lie within
// 2r + d_{k−1} of φ(w). When that radius is below the distance to the
// last of w's listed nearest candidates, every candidate inside it is on
// the list: ranking those by exact distance to q (ties by the lower row)
// gives the full search's answer. A word's list is its pruneList nearest
// candidates, searched once per space and kept.

// pruneList is the length of each word's list of nearest candidates.
const pruneList = 256

// prefetchLists bounds the lists neighbours searches ahead of need in one
// batch (its buffers: ≈ 50 MB for 4,096 lists).
const prefetchLists = 4096

type neighbourList struct {
	ids  []int32
	dist []float64 // increasing
}

// neighbours returns the lists of rows. Where one is not kept yet, it
// searches in one batch those of rows and of also (rows likely to be
// asked for next: an analysis's words) not kept yet: a search of a few
// rows streams the whole candidate matrix for them (on 2 Zen 2 cores, an
// analysis cell of 4,879 words at ε = 100, whose batches each asked for
// a few new lists, ran 5% slower than at ε = 25, where none is asked).
func (s *Space) neighbours(rows, also []int) ([]neighbourList, error) {
	n := min(pruneList, s.Emb.Len())
	s.mu.Lock()
	if s.lists == nil {
		s.lists = map[int]neighbourList{}
	}
	var missing []int
	seen := map[int]bool{}
	add := func(ws []int, most int) {
		for _, w := range ws {
			if len(missing) == most {
				return
			}
			if _, ok := s.lists[w]; !ok && !seen[w] {
				seen[w] = true
				missing = append(missing, w)
			}
		}
	}
	if add(rows, -1); len(missing) > 0 {
		add(also, len(missing)+prefetchLists)
	}
	s.mu.Unlock()
	if len(missing) > 0 {
		q := make([]float32, 0, len(missing)*s.Emb.Dim)
		for _, w := range missing {
			q = append(q, s.Emb.Vector(w)...)
		}
		ids, dist, err := s.Index.Search(q, n)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		for j, w := range missing {
			s.lists[w] = neighbourList{ids[j*n : (j+1)*n], dist[j*n : (j+1)*n]}
		}
		s.mu.Unlock()
	}
	out := make([]neighbourList, len(rows))
	s.mu.Lock()
	for i, w := range rows {
		out[i] = s.lists[w]
	}
	s.mu.Unlock()
	return out, nil
}

// mayPrune says whether w's list could answer the draw q at all: the
// radius of the bound is at least 2r, and the distance from φ(w) to the
// list's last (L-th nearest) candidate is at most ‖φ(w)‖ plus the L-th
// smallest candidate norm (each candidate is within ‖φ(w)‖ + ‖e‖ of
// φ(w), by the triangle inequality, and the L-th smallest of the
// distances is at most the L-th smallest of those bounds), so where 2r
// reaches past that, pruned would say no whatever the list: the list need
// not be searched. Where the noise dwarfs the vectors no draw searches a
// list: on the 300-d fastText vectors (‖z‖ ≈ 300/ε; the 256th smallest
// norm 2.10, the largest 8.9) none at ε ≤ 50 and about a fifth of the
// draws at ε = 100, where the largest norm in its place sent about half
// at ε = 50 and all at ε = 100 (nothing prunes below ε ≈ 200).
func (s *Space) mayPrune(w int, q []float32) bool {
	v := s.Emb.Vector(w)
	r := math.Sqrt(knn.SquaredDistance(q, v))
	var n2 float64
	for _, x := range v {
		n2 += float64(x) * float64(x)
	}
	return 2*r < (math.Sqrt(n2)+s.listNorm())*(1+1e-6) // the margin covers float64's rounding of the distances
}

// listNorm is the L-th smallest candidate norm, L a list's length,
// computed once per space.
func (s *Space) listNorm() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lnorm == 0 {
		norms := make([]float64, s.Emb.Len())
		for i := range norms {
			var n2 float64
			for _, x := range s.Emb.Vector(i) {
				n2 += float64(x) * float64(x)
			}
			norms[i] = math.Sqrt(n2)
		}
		slices.Sort(norms)
		s.lnorm = norms[min(pruneList, len(norms))-1]
		if s.lnorm == 0 { // L zero vectors: a list reaches no farther than ‖φ(w)‖
			s.lnorm = math.SmallestNonzeroFloat64
		}
	}
	return s.lnorm
}

// pruned answers the search of q (the draw of row w) from w's list, or
// says it cannot (false): the ball of the bound above reaches the list's
// end, or the list does not start with w.
func pruned(s *Space, l neighbourList, w int, q []float32, k int, ids []int32, dist []float64) bool {
	if len(l.ids) < k || int(l.ids[0]) != w || l.dist[0] != 0 {
		return false // w has a duplicate of a lower row: its list starts elsewhere
	}
	r := math.Sqrt(knn.SquaredDistance(q, s.Emb.Vector(w)))
	radius := (2*r + l.dist[k-1]) * (1 + 1e-9) // the margin covers float64's rounding of the distances
	last := len(l.ids) - 1
	if !(radius < l.dist[last]) {
		return false
	}
	m := sort.SearchFloat64s(l.dist, math.Nextafter(radius, math.Inf(1))) // the rows within radius
	if m < k {
		return false
	}
	s.Index.Rank(q, l.ids[:m], k, ids, dist)
	return true
}
