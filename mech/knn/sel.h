/* The float32 path's selection of package knn: see sel.go. Written for xp. */
#ifndef XP_KNN_SEL_H
#define XP_KNN_SEL_H
#include <stdint.h>

/* xp_smallest writes, for each of the nq rows of n scores (row i at
 * s + i*n), its kc smallest scores in ascending order, equal scores by
 * ascending column, to vals[i*kc ...] and their columns to idx[i*kc ...].
 * kc ≤ n. NaN scores come after every other, by ascending column. */
void xp_smallest(const float *s, int nq, int n, int kc, float *vals, int64_t *idx);
#endif
