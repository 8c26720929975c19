/* The kept-row bookkeeping that package knn's scanning kernels (q8.c,
 * f32.c) share. Written for xp. */
#ifndef XP_KNN_KEEP_H
#define XP_KNN_KEEP_H
#include <float.h>
#include <stddef.h>
#include <stdint.h>

/* insert_top puts u among the k smallest values top holds (ascending). */
static inline void insert_top(float *top, int k, float u) {
	if (u < top[k - 1]) {
		int j = k - 1;
		while (j > 0 && top[j - 1] > u) {
			top[j] = top[j - 1];
			j--;
		}
		top[j] = u;
	}
}

/* keep records row i with bounds [lo, up] for query state (idx, los, n, top). */
static inline void keep(int32_t *idx, float *los, int32_t *n, float *top, int k, int cap, int32_t row, float l,
                 float u) {
	if (*n < 0) {
		return;
	}
	insert_top(top, k, u);
	if (*n == cap) { /* compact: drop what the threshold now excludes */
		float thr = top[k - 1];
		int w = 0;
		for (int j = 0; j < cap; j++) {
			if (los[j] <= thr) {
				idx[w] = idx[j];
				los[w] = los[j];
				w++;
			}
		}
		*n = w;
		if (w > cap - 16) {
			*n = -1;
			return;
		}
	}
	if (l <= top[k - 1]) {
		idx[*n] = row;
		los[*n] = l;
		(*n)++;
	}
}

/* keep_none leaves every query to the exact scan (count −1): where a
 * kernel cannot run, or cannot get its buffers. */
static inline void keep_none(int nq, int32_t *count) {
	for (int i = 0; i < nq; i++) {
		count[i] = -1;
	}
}

/* keep_init sets every query's count to 0 and its thresholds to its seed
 * (seed NULL: FLT_MAX; a seed is at most FLT_MAX, so that rows of +∞ norm
 * never pass). A seed is an upper bound on the k-th smallest score of k
 * distinct rows (xp_f32_seed): all k thresholds start there, and the
 * k-th smallest of them and the upper bounds kept is then the smaller
 * of two such bounds, each a valid threshold. */
static inline void keep_init(int nq, int k, int32_t *count, float *top, const float *seed) {
	for (int i = 0; i < nq; i++) {
		count[i] = 0;
		for (int j = 0; j < k; j++) {
			top[(size_t)i * k + j] = seed ? seed[i] : FLT_MAX;
		}
	}
}

/* final keeps, of each query's kept rows, those whose lower bound is at
 * most the query's final threshold (its k-th smallest upper bound), their
 * lower bounds beside them. */
static inline void keep_final(int nq, int k, int cap, int32_t *out, int32_t *count, const float *top,
                              float *lo) {
	for (int i = 0; i < nq; i++) {
		if (count[i] < 0) {
			continue;
		}
		float thr = top[(size_t)i * k + k - 1];
		int32_t *idx = out + (size_t)i * cap;
		float *los = lo + (size_t)i * cap;
		int w = 0;
		for (int j = 0; j < count[i]; j++) {
			if (los[j] <= thr) {
				idx[w] = idx[j];
				los[w] = los[j];
				w++;
			}
		}
		count[i] = w;
	}
}
#endif
