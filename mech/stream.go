package mech

import (
	"hash/fnv"
	"math/rand/v2"

	"github.com/xp-nlp/xp/internal/rng"
)

// Source names where a privatization's randomness comes from: the run
// seed, the sweep cell (mechanism, ε, parameters) and the dataset split.
// Every token then draws from its own stream, determined by (Source,
// example index, token position): never by batch size, worker count or
// the order work happens to run in, so the same config and seed give
// byte-identical output.
type Source struct {
	Seed  uint64
	Cell  string
	Split string
}

// RNG names the generator and seeding for provenance records.
const RNG = "PCG (math/rand/v2) per token, seeded by SplitMix64(seed, FNV-1a(cell, split), example, position)"

func (s Source) base() uint64 {
	h := fnv.New64a()
	h.Write([]byte(s.Cell))
	h.Write([]byte{0})
	h.Write([]byte(s.Split))
	return splitmix(s.Seed ^ splitmix(h.Sum64()))
}

// Token returns the random stream of one token.
func (s Source) Token(example, position int) *rand.Rand {
	return tokenRand(s.base(), example, position)
}

func tokenRand(base uint64, example, position int) *rand.Rand {
	return rand.New(tokenPCG(base, example, position))
}

// tokenPCG is the generator behind tokenRand: its state, copied, gives
// several readers the same randomness from that point on (SharedDraws).
func tokenPCG(base uint64, example, position int) *rand.PCG {
	a := splitmix(base ^ splitmix(uint64(example)+0x632be59bd9b4e019))
	b := splitmix(a ^ splitmix(uint64(position)+0x8cb92ba72f3d8dd7))
	return rand.NewPCG(a, b)
}

// Word returns a stream for a draw that belongs to a word rather than a
// position (CusText's record- and dataset-level strategies).
func (s Source) Word(scope string, word string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(scope))
	h.Write([]byte{0})
	h.Write([]byte(word))
	a := splitmix(s.base() ^ splitmix(h.Sum64()))
	return rand.New(rand.NewPCG(a, splitmix(a)))
}

func splitmix(z uint64) uint64 { return rng.SplitMix64(z) }
