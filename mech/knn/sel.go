package knn

// #cgo CFLAGS: -O3
// #include "sel.h"
import "C"

import "unsafe"

// smallest writes, for each of the nq rows of n float32 scores at s (row
// i at s + i·n, memory libtorch owns: the caller keeps it alive), the kc
// smallest in ascending order, equal scores by ascending column, into
// vals and idx (nq·kc each), rows spread over every core. It replaces
// libtorch's top-k on the CPU, which copies every row into a vector of
// pairs before selecting; a threshold scan passes over nearly every
// score with one comparison.
func smallest(s unsafe.Pointer, nq, n, kc int, vals []float32, idx []int64) {
	const chunk = 16
	parallel((nq+chunk-1)/chunk, func(c int) {
		lo, hi := c*chunk, min(nq, (c+1)*chunk)
		C.xp_smallest((*C.float)(unsafe.Add(s, lo*n*4)), C.int(hi-lo), C.int(n), C.int(kc),
			(*C.float)(&vals[lo*kc]), (*C.int64_t)(&idx[lo*kc]))
	})
}
