// Package rng owns the integer mixing xp derives its seeds from: one
// SplitMix64 finaliser and the hashing of names into seeds, shared by the
// mechanisms' per-token streams (mech) and the seeded splits and samples
// of datasets, so that every seeded choice in xp mixes bits the same way.
package rng

import (
	"encoding/binary"
	"hash/fnv"
)

// SplitMix64 is the finaliser of Steele, Lea and Flood's SplitMix64
// generator (the golden-ratio increment, then two xor-shift-multiply
// rounds): a bijection of uint64 whose output bits each depend on every
// input bit.
func SplitMix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Hash mixes a seed and a sequence of names into 64 well-mixed bits:
// FNV-1a over the seed's little-endian bytes and the names separated by
// zero bytes, finished with SplitMix64 because FNV's low bits mix poorly
// for short keys.
func Hash(seed uint64, names ...string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	for i, n := range names {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write([]byte(n))
	}
	return SplitMix64(h.Sum64())
}
