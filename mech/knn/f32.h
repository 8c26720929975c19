/* The float32 scanning kernel of package knn (AVX2 and FMA): see f32.go
 * for what it computes and why its answer is certified. Written for xp. */
#ifndef XP_KNN_F32_H
#define XP_KNN_F32_H
#include <stdint.h>

/* 1 when this CPU runs the kernel (x86-64 with AVX2 and FMA). */
int xp_f32_supported(void);

/* The candidate matrix: nb (even) blocks of 8 rows; block b, dimension j
 * at f[(b*dim + j)*8], row r of the block at f[... + r]. Per row (nb*8
 * entries): norm ‖e‖² rounded to float32 (+inf: never a candidate) and en
 * ≥ ‖e‖; max the largest finite norm and en. */
typedef struct {
	const float *f, *norm, *en;
	int nb, dim;
	float max[2];
} xp_f32_matrix;

/* Queries: nq (a multiple of 6) rows of dim floats, and per query qc
 * (the bound's weight of a row's en; c1, the weight of its norm, is one
 * constant). */
typedef struct {
	const float *q, *qc;
	float c1;
	int nq;
} xp_f32_queries;

/* xp_f32_select keeps, for each query, every row whose lower bound on
 * its score ‖e‖² − 2e·q is at most the k-th smallest upper bound (as
 * xp_q8_select; count −1: more than cap, the caller scans exactly). top
 * is scratch of nq*k floats and lo of nq*cap floats. */
void xp_f32_select(const xp_f32_matrix *m, const xp_f32_queries *q, int k, int cap, int32_t *out, int32_t *count,
                   float *top, float *lo);
#endif
