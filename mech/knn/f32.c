/* The float32 scanning kernel of package knn: see f32.h and f32.go.
 * Written for xp. Compiled for every target; the AVX2 code only where the
 * compiler targets x86-64, and run only where xp_f32_supported says so. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "f32.h"
#include "keep.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define XP_F32_TARGET __attribute__((target("avx2,fma")))

int xp_f32_supported(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* epilogue: the 8 rows of block b against query i, whose dot products
 * (one FMA chain each, dimensions in order) are dot. */
XP_F32_TARGET static inline void consider(const xp_f32_matrix *m, const xp_f32_queries *q, int i, int b,
                                          float dmax, __m256 dot, int k, int cap, int32_t *out, int32_t *count,
                                          float *top, float *lo) {
	int32_t *n = &count[i];
	if (*n < 0) {
		return;
	}
	float *tp = top + (size_t)i * k;
	__m256 thr = _mm256_set1_ps(tp[k - 1]);
	__m256 norm = _mm256_loadu_ps(m->norm + b * 8);
	__m256 a = _mm256_fnmadd_ps(_mm256_set1_ps(2.0f), dot, norm); /* ‖e‖² − 2e·q, one rounding */
	if (!_mm256_movemask_ps(_mm256_cmp_ps(_mm256_sub_ps(a, _mm256_set1_ps(dmax)), thr, _CMP_LE_OQ))) {
		return;
	}
	__m256 delta = _mm256_fmadd_ps(_mm256_loadu_ps(m->en + b * 8), _mm256_set1_ps(q->qc[i]),
	                               _mm256_mul_ps(norm, _mm256_set1_ps(q->c1)));
	int pass = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_sub_ps(a, delta), thr, _CMP_LE_OQ));
	if (!pass) {
		return;
	}
	float av[8], dv[8];
	_mm256_storeu_ps(av, a);
	_mm256_storeu_ps(dv, delta);
	int32_t *idx = out + (size_t)i * cap;
	float *los = lo + (size_t)i * cap;
	while (pass) {
		int r = __builtin_ctz(pass);
		pass &= pass - 1;
		keep(idx, los, n, tp, k, cap, b * 8 + r, av[r] - dv[r], av[r] + dv[r]);
	}
}

/* tile: queries i0..i0+5 against blocks b0 and b0+1 (12 accumulators,
 * two rows of the matrix and a query's broadcast: 15 of 16 registers). */
XP_F32_TARGET static void tile(const xp_f32_matrix *m, const xp_f32_queries *q, const float *dmax, int i0, int b0,
                               int k, int cap, int32_t *out, int32_t *count, float *top, float *lo) {
	const int D = m->dim;
	const float *f0 = m->f + (size_t)b0 * D * 8, *f1 = f0 + (size_t)D * 8;
	const float *q0 = q->q + (size_t)i0 * D;
	__m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00,
	       a40 = a00, a41 = a00, a50 = a00, a51 = a00;
	for (int j = 0; j < D; j++) {
		__m256 x0 = _mm256_loadu_ps(f0 + j * 8), x1 = _mm256_loadu_ps(f1 + j * 8);
#define XP_F32_STEP(r, acc0, acc1)                                                                         \
	{                                                                                                  \
		__m256 qb = _mm256_broadcast_ss(q0 + (r) * D + j);                                         \
		acc0 = _mm256_fmadd_ps(x0, qb, acc0);                                                      \
		acc1 = _mm256_fmadd_ps(x1, qb, acc1);                                                      \
	}
		XP_F32_STEP(0, a00, a01)
		XP_F32_STEP(1, a10, a11)
		XP_F32_STEP(2, a20, a21)
		XP_F32_STEP(3, a30, a31)
		XP_F32_STEP(4, a40, a41)
		XP_F32_STEP(5, a50, a51)
#undef XP_F32_STEP
	}
	__m256 acc[6][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}, {a40, a41}, {a50, a51}};
	for (int r = 0; r < 6; r++) {
		for (int j = 0; j < 2; j++) {
			consider(m, q, i0 + r, b0 + j, dmax[i0 + r], acc[r][j], k, cap, out, count, top, lo);
		}
	}
}

XP_F32_TARGET void xp_f32_select(const xp_f32_matrix *m, const xp_f32_queries *q, int k, int cap, int32_t *out,
                                 int32_t *count, float *top, float *lo) {
	keep_init(q->nq, k, count, top, q->seed);
	float *dmax = malloc(sizeof(float) * (size_t)q->nq);
	if (dmax == NULL) {
		keep_none(q->nq, count);
		return;
	}
	/* every row's bound is at most the bound at the largest norm and en
	 * (each operation rounds monotonically) */
	for (int i = 0; i < q->nq; i++) {
		float d = fmaf(m->max[1], q->qc[i], m->max[0] * q->c1);
		dmax[i] = d + d * 0x1p-20f;
	}
	/* 192 queries share each two blocks: the blocks stay in L1, the
	 * queries in L2 */
	for (int i0 = 0; i0 < q->nq; i0 += 192) {
		int i1 = i0 + 192 < q->nq ? i0 + 192 : q->nq;
		for (int b = 0; b < m->nb; b += 2) {
			for (int i = i0; i < i1; i += 6) {
				tile(m, q, dmax, i, b, k, cap, out, count, top, lo);
			}
		}
	}
	free(dmax);
	keep_final(q->nq, k, cap, out, count, top, lo);
}

/* dot8 is e·q with eight FMA chains over the dimensions (a chain where
 * dim < 8) and their sum: at most ⌈dim/8⌉ + 4 ≤ dim roundings deep for
 * any term, within the kernel's bound γ_dim·‖e‖‖q‖ (f32.go), which holds
 * for any order of summation of that depth. */
XP_F32_TARGET static inline float dot8(const float *e, const float *q, int dim) {
	if (dim < 8) {
		float s = 0;
		for (int j = 0; j < dim; j++) {
			s = fmaf(e[j], q[j], s);
		}
		return s;
	}
	__m256 acc = _mm256_setzero_ps();
	int j = 0;
	for (; j + 8 <= dim; j += 8) {
		acc = _mm256_fmadd_ps(_mm256_loadu_ps(e + j), _mm256_loadu_ps(q + j), acc);
	}
	float t = 0;
	for (; j < dim; j++) {
		t = fmaf(e[j], q[j], t);
	}
	__m128 h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
	h = _mm_add_ps(h, _mm_movehl_ps(h, h));
	h = _mm_add_ss(h, _mm_movehdup_ps(h));
	return _mm_cvtss_f32(h) + t;
}

/* score is row r's float32 score ‖e‖² − 2e·q (data row-major, dim
 * floats a row) and *delta its bound (f32.go: norm and en indexed by row,
 * qc and c1 the query's weights): the one place xp_f32_refine and
 * xp_f32_seed take a row's bounds from. */
XP_F32_TARGET static inline float score(const float *data, int dim, const float *norm, const float *en,
                                        const float *q, float qc, float c1, int32_t r, float *delta) {
	*delta = fmaf(en[r], qc, norm[r] * c1);
	return fmaf(-2.0f, dot8(data + (size_t)r * dim, q, dim), norm[r]);
}

XP_F32_TARGET int xp_f32_refine(const float *data, int dim, const float *norm, const float *en, const float *q,
                                float qc, float c1, const int32_t *idx, const float *lo8, int n, int k,
                                int32_t *out, float *scratch) {
	if (k > 64) { /* keep every row: the exact ranking sorts them out */
		for (int j = 0; j < n; j++) {
			out[j] = idx[j];
		}
		return n;
	}
	float *lo = scratch; /* a scored row's float32 lower bound */
	float top[64];
	int first[64];
	for (int j = 0; j < k; j++) {
		top[j] = FLT_MAX;
		first[j] = -1;
	}
	/* the k rows of smallest lower bound first (insertion, k small) */
	float fl[64];
	for (int j = 0; j < k; j++) {
		fl[j] = INFINITY;
	}
	for (int j = 0; j < n; j++) {
		out[j] = 0; /* 1 once row j is scored */
		if (lo8[j] < fl[k - 1] || first[k - 1] < 0) {
			int i = k - 1;
			while (i > 0 && (first[i - 1] < 0 || fl[i - 1] > lo8[j])) {
				fl[i] = fl[i - 1];
				first[i] = first[i - 1];
				i--;
			}
			fl[i] = lo8[j];
			first[i] = j;
		}
	}
#define XP_SCORE(j)                                                                                        \
	{                                                                                                  \
		float d;                                                                                   \
		float a = score(data, dim, norm, en, q, qc, c1, idx[j], &d);                               \
		lo[j] = a - d;                                                                             \
		out[j] = 1;                                                                                \
		insert_top(top, k, a + d);                                                                 \
	}
	for (int i = 0; i < k; i++) {
		XP_SCORE(first[i])
	}
	/* then every other row whose lower bound reaches the threshold so
	 * far: one that does not lies above the final threshold too */
	for (int j = 0; j < n; j++) {
		if (!out[j] && lo8[j] <= top[k - 1]) {
			XP_SCORE(j)
		}
	}
#undef XP_SCORE
	int w = 0; /* w ≤ j: out[j] is read before it is written */
	for (int j = 0; j < n; j++) {
		if (out[j] && lo[j] <= top[k - 1]) {
			out[w++] = idx[j];
		}
	}
	return w;
}

XP_F32_TARGET float xp_f32_seed(const float *data, int dim, const float *norm, const float *en, const float *q,
                                float qc, float c1, const int32_t *idx, int n, int k) {
	float top[64];
	int32_t rows[64];
	if (k > 64) {
		return FLT_MAX;
	}
	for (int j = 0; j < k; j++) {
		top[j] = FLT_MAX;
		rows[j] = -1;
	}
	for (int j = 0; j < n; j++) {
		int32_t r = idx[j];
		int seen = 0;
		for (int i = 0; i < k; i++) {
			seen |= rows[i] == r;
		}
		float d, u = score(data, dim, norm, en, q, qc, c1, r, &d);
		u += d;
		if (seen || !(u < top[k - 1])) { /* a repeat; or larger, +∞ or NaN */
			continue;
		}
		int i = k - 1;
		while (i > 0 && top[i - 1] > u) {
			top[i] = top[i - 1];
			rows[i] = rows[i - 1];
			i--;
		}
		top[i] = u;
		rows[i] = r;
	}
	return top[k - 1];
}

#else

int xp_f32_supported(void) { return 0; }

int xp_f32_refine(const float *data, int dim, const float *norm, const float *en, const float *q, float qc, float c1,
                  const int32_t *idx, const float *lo8, int n, int k, int32_t *out, float *scratch) {
	for (int j = 0; j < n; j++) { /* never called: keeps every row */
		out[j] = idx[j];
	}
	return n;
}

void xp_f32_select(const xp_f32_matrix *m, const xp_f32_queries *q, int k, int cap, int32_t *out, int32_t *count,
                   float *top, float *lo) {
	keep_none(q->nq, count); /* never called: the exact scan answers */
}

float xp_f32_seed(const float *data, int dim, const float *norm, const float *en, const float *q, float qc, float c1,
                  const int32_t *idx, int n, int k) {
	return FLT_MAX; /* never called: no kernel scans */
}

#endif
