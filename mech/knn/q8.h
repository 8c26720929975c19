/* The int8 scoring kernel of package knn (q8.go says what it computes and
 * why its answer is certified). Written for xp. */
#ifndef XP_KNN_Q8_H
#define XP_KNN_Q8_H
#include <stdint.h>

/* 1 when this CPU runs the kernel (x86-64 with AVX-512 F, BW and VNNI). */
int xp_q8_supported(void);

/* The AVX2 kernel's levels: rows and queries hold integers in [−L, L],
 * L = XP_Q8A_LEVEL, the rows' bytes offset by L. vpmaddubsw sums two
 * products (row byte ≤ 2L, query ≤ L in magnitude) in int16, and the kernel
 * adds four such sums in int16 before widening: 8·2L·L = 32,400 ≤ 32,767,
 * so nothing saturates or wraps. */
#define XP_Q8A_LEVEL 45

/* The candidate matrix: nb (a multiple of 3) blocks of 16 rows; block b, dimension group g
 * (4 dimensions) at e[(b*groups + g)*64], row r of the block at byte 4r,
 * each value offset by 128 (unsigned). Per row (nb*16 entries):
 * norm ‖e‖² (+inf: never a candidate), scale s (ê = s·E), l1 ‖ê‖₁,
 * l2 ‖ê‖₂, res ‖e − ê‖₂. max holds the largest finite value of each
 * of norm, scale, l1, l2 and res over the rows (or larger values: the
 * kernel passes over a row whose bound at these values rules it out).
 * The AVX2 kernel reads normlo and normhi, ‖e‖² rounded outward by 10u
 * (u = 2⁻²⁴; +inf both for a row that is never a candidate), in place of
 * norm, and neither l1 nor max. */
typedef struct {
	const uint8_t *e;
	const float *norm, *scale, *l1, *l2, *res;
	int nb, groups;
	float max[5];
	const float *normlo, *normhi;
} xp_q8_matrix;

/* Queries: nq (a multiple of 8) rows of groups*4 signed values q (q̂ =
 * qscale·q), and per query: qsum Σq, qscale, and the weights of the
 * bound (q8.go): ql1 = 1.01·‖q‖₁ (of a row's scale), ql2 = 2.02·‖q‖₂ (of
 * its res), qs = 1.01·qscale (of its l1), qres = 2.02·‖q − q̂‖₂ and
 * qf = 16u·‖q̂‖₂ (of its l2); for the AVX2 kernel qcs = qres + qf rounded
 * up (of its l2); unless seed is NULL, its seed (keep.h: keep_init). */
typedef struct {
	const int8_t *q;
	const int32_t *qsum;
	const float *qscale, *ql1, *ql2, *qs, *qres, *qf;
	int nq;
	const float *qcs;
	const float *seed;
} xp_q8_queries;

/* xp_q8a_select is xp_q8_select on AVX2 and FMA, run where
 * xp_f32_supported says so (q8.go: newQ8 lays out the
 * matrix for it): blocks of 8 rows, nb a multiple of 2, groups a multiple
 * of 4, block b's group g at e[(b*groups + g)*32], row r at byte 4r, each
 * value offset by XP_Q8A_LEVEL; queries of groups*4 values in
 * [−XP_Q8A_LEVEL, XP_Q8A_LEVEL], nq a multiple of 6. */
void xp_q8a_select(const xp_q8_matrix *m, const xp_q8_queries *q, int k, int cap,
                   int32_t *out, int32_t *count, float *top, float *lo);

/* xp_q8_select keeps, for each query, every row whose lower bound on its
 * score ‖e‖² − 2e·q is at most the k-th smallest upper bound: their
 * indices in out[i*cap ...], their number in count[i] (−1: more than cap,
 * the caller scans that query exactly). top is scratch of nq*k floats and
 * lo of nq*cap floats. */
void xp_q8_select(const xp_q8_matrix *m, const xp_q8_queries *q, int k, int cap,
                  int32_t *out, int32_t *count, float *top, float *lo);
#endif
