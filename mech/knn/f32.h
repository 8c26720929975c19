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
 * constant) and, unless seed is NULL, its seed (keep.h: keep_init). */
typedef struct {
	const float *q, *qc;
	float c1;
	int nq;
	const float *seed;
} xp_f32_queries;

/* xp_f32_select keeps, for each query, every row whose lower bound on
 * its score ‖e‖² − 2e·q is at most the k-th smallest upper bound (as
 * xp_q8_select; count −1: more than cap, the caller scans exactly). top
 * is scratch of nq*k floats and lo of nq*cap floats. */
void xp_f32_select(const xp_f32_matrix *m, const xp_f32_queries *q, int k, int cap, int32_t *out, int32_t *count,
                   float *top, float *lo);

/* xp_f32_refine takes the n rows idx of data (row-major, dim floats a
 * row) with lower bounds lo8 on their scores against the query q (a
 * kernel's), scores in float32 with the kernel's bound (norm and en per
 * row as in xp_f32_matrix, indexed by row; qc and c1 as in
 * xp_f32_queries) the k of lowest lo8, then each other row whose lo8 is
 * at most the k-th smallest upper bound so far, and keeps, in their
 * order, the scored rows whose lower bound is at most the final one (k ≤
 * n): it writes them to out and returns their number. scratch holds n
 * floats. */
int xp_f32_refine(const float *data, int dim, const float *norm, const float *en, const float *q, float qc, float c1,
                  const int32_t *idx, const float *lo8, int n, int k, int32_t *out, float *scratch);

/* xp_f32_seed returns the k-th smallest of the upper bounds on the scores
 * of the n rows idx (k ≤ 64; a row repeated counts once) that
 * xp_f32_refine computes, or FLT_MAX where fewer than k of them are
 * below it (rows of +∞ norm never are): at least the k-th smallest score
 * of k distinct rows, so at least q's k-th smallest score, and a
 * threshold a kernel may start from (keep.h: keep_init). */
float xp_f32_seed(const float *data, int dim, const float *norm, const float *en, const float *q, float qc, float c1,
                  const int32_t *idx, int n, int k);
#endif
