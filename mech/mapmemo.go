package mech

import (
	"runtime"
	"sync"
)

// A space keeps the CusText mappings its mechanisms used last in memory,
// with their inputs' set members' scores, which ε plays no part in: the
// cells of a sweep at other ε (CusText Tables 6–7: one mapping, up to
// seven ε) read them instead of decoding the cached mapping and scoring
// every set again. The values are the ones each cell computed before,
// bit for bit (the same function computes them: memberScores).

// keptMappings is how many mappings a space keeps (a 44,252-input
// mapping at K = 100 and its scores are tens of MB).
const keptMappings = 4

type keptMapping struct {
	key    string
	mp     *Mapping
	scores map[string]map[int32][]float64 // by score ("cosine", "euclidean"): input row → its set's scores
}

// mapping returns the mapping named key: kept in memory, else read from
// the cache folder or built by build (see cached), then kept.
func (s *Space) mapping(key string, build func() (*Mapping, error)) (*Mapping, error) {
	s.mu.Lock()
	for i, k := range s.maps {
		if k.key == key {
			s.maps = append(append(s.maps[:i:i], s.maps[i+1:]...), k) // most recent last
			s.mu.Unlock()
			return k.mp, nil
		}
	}
	s.mu.Unlock()
	// Built outside the lock: building searches the space, whose other
	// structures take it.
	mp := &Mapping{}
	if err := s.cached(key, mp, func() error {
		b, err := build()
		if err == nil {
			*mp = *b
		}
		return err
	}); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.maps {
		if k.key == key { // another cell kept it meanwhile: the same mapping
			return k.mp, nil
		}
	}
	if len(s.maps) == keptMappings {
		s.maps = append(s.maps[:0:0], s.maps[1:]...) // a new array: the one that leaves is not held by the old
	}
	s.maps = append(s.maps, &keptMapping{key: key, mp: mp})
	return mp, nil
}

// MemberCosines returns, for each input row of mp, the cosine of its
// vector with each member of its output set, in the set's order (0 for a
// member taken as a zero vector): computed once for a mapping the space
// keeps.
func (s *Space) MemberCosines(mp *Mapping) map[int32][]float64 {
	return s.memberScores(mp, "cosine")
}

// memberScores returns, for each input row of mp, its set members'
// scores of the kind named (see setScores), computed once for a mapping
// the space keeps (else each time).
func (s *Space) memberScores(mp *Mapping, kind string) map[int32][]float64 {
	find := func() *keptMapping {
		for _, k := range s.maps {
			if k.mp == mp {
				return k
			}
		}
		return nil
	}
	s.mu.Lock()
	if k := find(); k != nil && k.scores[kind] != nil {
		s.mu.Unlock()
		return k.scores[kind]
	}
	s.mu.Unlock()
	// Inputs in parallel: each one's scores are its own.
	rows := make([][]float64, len(mp.Order))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(rows)))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(rows); i += workers {
				x := mp.Order[i]
				rows[i] = setScores(s, mp, x, mp.Of[x], kind)
			}
		}()
	}
	wg.Wait()
	sc := make(map[int32][]float64, len(rows))
	for i, x := range mp.Order {
		sc[x] = rows[i]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := find(); k != nil {
		if k.scores == nil {
			k.scores = map[string]map[int32][]float64{}
		}
		k.scores[kind] = sc
	}
	return sc
}
