/* The int8 scoring kernel of package knn: see q8.h and q8.go. Written for
 * xp. Compiled for every target; the AVX-512 VNNI code only where the
 * compiler targets x86-64, and run only where xp_q8_supported says so. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keep.h"
#include "q8.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define XP_Q8_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

int xp_q8_supported(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vnni");
}

/* the row values of the bound, for one block of 16 rows */
typedef struct {
	__m512 norm, scale, l1, l2, res;
} rows16;

XP_Q8_TARGET static inline rows16 rows_of(const xp_q8_matrix *m, int b) {
	int base = b * 16;
	rows16 r = {_mm512_loadu_ps(m->norm + base), _mm512_loadu_ps(m->scale + base), _mm512_loadu_ps(m->l1 + base),
	            _mm512_loadu_ps(m->l2 + base), _mm512_loadu_ps(m->res + base)};
	return r;
}

/* epilogue: 16 rows of block b (row values r) against query i, whose
 * product acc already holds Σ(E+128)q − 128Σq = ΣEq (exact in int32;
 * exact in float32 below 2^24). dmax is the query's bound at the
 * matrix's largest row values, at least every row's delta: a row whose
 * a − dmax exceeds the threshold has a − delta above it too, and is
 * passed over without computing its own bound. */
XP_Q8_TARGET static inline void consider(const xp_q8_queries *q, int i, int b, const rows16 *rv, float dmax,
                                         __m512i dot, int k, int cap, int32_t *out, int32_t *count, float *top,
                                         float *lo) {
	int32_t *n = &count[i];
	if (*n < 0) {
		return;
	}
	float *tp = top + (size_t)i * k;
	__m512 thr = _mm512_set1_ps(tp[k - 1]);
	__m512 d = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(rv->scale, _mm512_set1_ps(q->qscale[i])));
	__m512 a = _mm512_fnmadd_ps(_mm512_set1_ps(2.0f), d, rv->norm); /* ‖e‖² − 2ê·q̂ */
	if (!_mm512_cmp_ps_mask(_mm512_sub_ps(a, _mm512_set1_ps(dmax)), thr, _CMP_LE_OQ)) {
		return;
	}
	/* the rounding bound: each of the two roundings by the smaller of
	 * Hölder's and Cauchy–Schwarz's bound, then float32's */
	__m512 e1 = _mm512_min_ps(_mm512_mul_ps(rv->scale, _mm512_set1_ps(q->ql1[i])),
	                          _mm512_mul_ps(rv->res, _mm512_set1_ps(q->ql2[i])));
	__m512 e2 = _mm512_min_ps(_mm512_mul_ps(rv->l1, _mm512_set1_ps(q->qs[i])),
	                          _mm512_mul_ps(rv->l2, _mm512_set1_ps(q->qres[i])));
	__m512 delta = _mm512_add_ps(e1, e2);
	delta = _mm512_fmadd_ps(rv->norm, _mm512_set1_ps(8.0f / 16777216.0f), delta);
	delta = _mm512_fmadd_ps(rv->l2, _mm512_set1_ps(q->qf[i]), delta);
	__m512 low = _mm512_sub_ps(a, delta);
	__mmask16 pass = _mm512_cmp_ps_mask(low, thr, _CMP_LE_OQ);
	if (!pass) {
		return;
	}
	float av[16], dv[16];
	_mm512_storeu_ps(av, a);
	_mm512_storeu_ps(dv, delta);
	int32_t *idx = out + (size_t)i * cap;
	float *los = lo + (size_t)i * cap;
	int base = b * 16;
	while (pass) {
		int r = __builtin_ctz(pass);
		pass &= pass - 1;
		keep(idx, los, n, tp, k, cap, base + r, av[r] - dv[r], av[r] + dv[r]);
	}
}

/* tile: queries i0..i0+7 against blocks b0, b0+1 and b0+2 (24
 * accumulators, three rows of the candidate matrix and a query's
 * broadcast in 28 of the 32 vector registers). */
XP_Q8_TARGET static void tile(const xp_q8_matrix *m, const xp_q8_queries *q, const float *dmax, int i0, int b0,
                              const rows16 *rv, int k, int cap, int32_t *out, int32_t *count, float *top, float *lo) {
	const int G = m->groups, stride = G * 4;
	const uint8_t *e0 = m->e + (size_t)b0 * G * 64, *e1 = e0 + (size_t)G * 64, *e2 = e1 + (size_t)G * 64;
	const int8_t *qq = q->q + (size_t)i0 * stride;
	/* each accumulator starts at −128Σq: the offset of the rows' bytes */
	__m512i z0 = _mm512_set1_epi32(-128 * q->qsum[i0]), z1 = _mm512_set1_epi32(-128 * q->qsum[i0 + 1]),
	        z2 = _mm512_set1_epi32(-128 * q->qsum[i0 + 2]), z3 = _mm512_set1_epi32(-128 * q->qsum[i0 + 3]),
	        z4 = _mm512_set1_epi32(-128 * q->qsum[i0 + 4]), z5 = _mm512_set1_epi32(-128 * q->qsum[i0 + 5]),
	        z6 = _mm512_set1_epi32(-128 * q->qsum[i0 + 6]), z7 = _mm512_set1_epi32(-128 * q->qsum[i0 + 7]);
	__m512i a00 = z0, a01 = z0, a02 = z0, a10 = z1, a11 = z1, a12 = z1, a20 = z2, a21 = z2, a22 = z2, a30 = z3,
	        a31 = z3, a32 = z3, a40 = z4, a41 = z4, a42 = z4, a50 = z5, a51 = z5, a52 = z5, a60 = z6, a61 = z6,
	        a62 = z6, a70 = z7, a71 = z7, a72 = z7;
	for (int g = 0; g < G; g++) {
		__m512i x0 = _mm512_loadu_si512(e0 + g * 64), x1 = _mm512_loadu_si512(e1 + g * 64),
		        x2 = _mm512_loadu_si512(e2 + g * 64);
		int32_t w;
#define XP_Q8_STEP(r, acc0, acc1, acc2)                                                                    \
	memcpy(&w, qq + (r) * stride + g * 4, 4);                                                          \
	{                                                                                                  \
		__m512i qb = _mm512_set1_epi32(w);                                                         \
		acc0 = _mm512_dpbusd_epi32(acc0, x0, qb);                                                  \
		acc1 = _mm512_dpbusd_epi32(acc1, x1, qb);                                                  \
		acc2 = _mm512_dpbusd_epi32(acc2, x2, qb);                                                  \
	}
		XP_Q8_STEP(0, a00, a01, a02)
		XP_Q8_STEP(1, a10, a11, a12)
		XP_Q8_STEP(2, a20, a21, a22)
		XP_Q8_STEP(3, a30, a31, a32)
		XP_Q8_STEP(4, a40, a41, a42)
		XP_Q8_STEP(5, a50, a51, a52)
		XP_Q8_STEP(6, a60, a61, a62)
		XP_Q8_STEP(7, a70, a71, a72)
#undef XP_Q8_STEP
	}
	__m512i acc[8][3] = {{a00, a01, a02}, {a10, a11, a12}, {a20, a21, a22}, {a30, a31, a32},
	                     {a40, a41, a42}, {a50, a51, a52}, {a60, a61, a62}, {a70, a71, a72}};
	for (int r = 0; r < 8; r++) {
		for (int j = 0; j < 3; j++) {
			consider(q, i0 + r, b0 + j, &rv[j], dmax[i0 + r], acc[r][j], k, cap, out, count, top, lo);
		}
	}
}

XP_Q8_TARGET void xp_q8_select(const xp_q8_matrix *m, const xp_q8_queries *q, int k, int cap, int32_t *out,
                               int32_t *count, float *top, float *lo) {
	keep_init(q->nq, k, count, top, q->seed);
	/* every row's bound is at most the bound at the matrix's largest row
	 * values (each operation rounds monotonically); rows without a
	 * finite norm never pass either way */
	const float nmax = m->max[0], smax = m->max[1], l1max = m->max[2], l2max = m->max[3], rmax = m->max[4];
	float *dmax = malloc(sizeof(float) * (size_t)q->nq);
	if (dmax == NULL) {
		keep_none(q->nq, count);
		return;
	}
	for (int i = 0; i < q->nq; i++) {
		float d = fminf(smax * q->ql1[i], rmax * q->ql2[i]) + fminf(l1max * q->qs[i], l2max * q->qres[i]);
		d = fmaf(nmax, 8.0f / 16777216.0f, d);
		d = fmaf(l2max, q->qf[i], d);
		dmax[i] = d + d * 0x1p-20f; /* a margin for good measure */
	}
	/* 256 queries share each three blocks: the blocks stay in L1, the
	 * queries in L2 */
	for (int i0 = 0; i0 < q->nq; i0 += 256) {
		int i1 = i0 + 256 < q->nq ? i0 + 256 : q->nq;
		for (int b = 0; b < m->nb; b += 3) {
			rows16 rv[3] = {rows_of(m, b), rows_of(m, b + 1), rows_of(m, b + 2)};
			for (int i = i0; i < i1; i += 8) {
				tile(m, q, dmax, i, b, rv, k, cap, out, count, top, lo);
			}
		}
	}
	free(dmax);
	keep_final(q->nq, k, cap, out, count, top, lo); /* the final threshold */
}

/* The AVX2 kernel: the same bound and bookkeeping as above, 8 rows a
 * 256-bit register, vpmaddubsw's int16 sums of four dimension groups
 * added in int16 before vpmaddwd widens them (q8.h: XP_Q8A_LEVEL). */
#define XP_Q8A_TARGET __attribute__((target("avx2,fma")))

/* a tile: XP_Q8A_R queries against XP_Q8A_C blocks of 8 rows (tile_a) */
#define XP_Q8A_R 2
#define XP_Q8A_C 2

/* epilogue of a tile: the rows of blocks b0..b0+XP_Q8A_C−1 against queries
 * i0..i0+XP_Q8A_R−1, whose products dot already hold ΣEq (the rows'
 * offset taken off). Its bound is Cauchy–Schwarz's alone (q8.go), the
 * rows' norms rounded outward in place of the rounding term of ‖e‖²:
 *
 *	lower = normlo − 2ê·q̂ − res·ql2 − l2·qcs   (upper: normhi, + δ)
 *
 * four float32 operations a row, the upper bound only for a row that
 * passes. Every pair's lower bound is computed first, and a tile none of
 * whose rows passes (nearly all) costs one branch. */
XP_Q8A_TARGET static inline void consider_a(const xp_q8_matrix *m, const xp_q8_queries *q, int i0, int b0,
                                            __m256i dot[XP_Q8A_R][XP_Q8A_C], int k, int cap, int32_t *out,
                                            int32_t *count, float *top, float *lo) {
	__m256 normlo[XP_Q8A_C], scale[XP_Q8A_C], l2[XP_Q8A_C], res[XP_Q8A_C];
	for (int c = 0; c < XP_Q8A_C; c++) {
		int base = (b0 + c) * 8;
		normlo[c] = _mm256_loadu_ps(m->normlo + base);
		scale[c] = _mm256_loadu_ps(m->scale + base);
		l2[c] = _mm256_loadu_ps(m->l2 + base);
		res[c] = _mm256_loadu_ps(m->res + base);
	}
	__m256 dv[XP_Q8A_R][XP_Q8A_C], lv[XP_Q8A_R][XP_Q8A_C], pv[XP_Q8A_R][XP_Q8A_C], any = _mm256_setzero_ps();
	for (int r = 0; r < XP_Q8A_R; r++) {
		int i = i0 + r;
		__m256 thr = _mm256_set1_ps(top[(size_t)i * k + k - 1]), q2 = _mm256_set1_ps(2.0f * q->qscale[i]),
		       ql2 = _mm256_set1_ps(q->ql2[i]), qcs = _mm256_set1_ps(q->qcs[i]);
		for (int c = 0; c < XP_Q8A_C; c++) {
			__m256 d = _mm256_mul_ps(_mm256_cvtepi32_ps(dot[r][c]), q2); /* 2ê·q̂ = scale·d */
			__m256 l = _mm256_fnmadd_ps(scale[c], d, normlo[c]);
			l = _mm256_fnmadd_ps(res[c], ql2, l);
			l = _mm256_fnmadd_ps(l2[c], qcs, l);
			dv[r][c] = d;
			lv[r][c] = l;
			pv[r][c] = _mm256_cmp_ps(l, thr, _CMP_LE_OQ);
			any = _mm256_or_ps(any, pv[r][c]);
		}
	}
	if (!_mm256_movemask_ps(any)) {
		return;
	}
	for (int r = 0; r < XP_Q8A_R; r++) {
		int i = i0 + r;
		int32_t *n = &count[i];
		float *tp = top + (size_t)i * k;
		int32_t *idx = out + (size_t)i * cap;
		float *los = lo + (size_t)i * cap;
		const float ql2 = q->ql2[i], qcs = q->qcs[i];
		for (int c = 0; c < XP_Q8A_C; c++) {
			int p = _mm256_movemask_ps(pv[r][c]);
			if (!p || *n < 0) {
				continue;
			}
			/* an earlier row of this query may have lowered its
			 * threshold: keep tests each row against the current one */
			float d8[8], l8[8];
			_mm256_storeu_ps(d8, dv[r][c]);
			_mm256_storeu_ps(l8, lv[r][c]);
			while (p) {
				int j = __builtin_ctz(p);
				p &= p - 1;
				int row = (b0 + c) * 8 + j;
				float u = fmaf(m->l2[row], qcs, fmaf(m->res[row], ql2, fmaf(-m->scale[row], d8[j], m->normhi[row])));
				keep(idx, los, n, tp, k, cap, row, l8[j], u);
			}
		}
	}
}

/* tile_a: queries i0, i0+1 against blocks b0, b0+1: four int32
 * accumulators, four int16 ones for a run of four groups, two rows of the
 * matrix, a query's broadcast and vpmaddwd's ones (12 of 16 registers:
 * wider tiles spill under GCC). */
XP_Q8A_TARGET static void tile_a(const xp_q8_matrix *m, const xp_q8_queries *q, int i0, int b0, int k, int cap,
                                 int32_t *out, int32_t *count, float *top, float *lo) {
	const int G = m->groups, stride = G * 4;
	const uint8_t *e0 = m->e + (size_t)b0 * G * 32, *e1 = e0 + (size_t)G * 32;
	const int8_t *q0 = q->q + (size_t)i0 * stride, *q1 = q0 + stride;
	const __m256i ones = _mm256_set1_epi16(1);
	__m256i a00 = _mm256_set1_epi32(-XP_Q8A_LEVEL * q->qsum[i0]), a01 = a00,
	        a10 = _mm256_set1_epi32(-XP_Q8A_LEVEL * q->qsum[i0 + 1]), a11 = a10;
	for (int g = 0; g < G; g += 4) {
		__m256i h00 = _mm256_setzero_si256(), h01 = h00, h10 = h00, h11 = h00;
		for (int j = g; j < g + 4; j++) {
			__m256i x0 = _mm256_loadu_si256((const __m256i *)(e0 + j * 32)),
			        x1 = _mm256_loadu_si256((const __m256i *)(e1 + j * 32));
			int32_t w0, w1;
			memcpy(&w0, q0 + j * 4, 4);
			memcpy(&w1, q1 + j * 4, 4);
			__m256i b = _mm256_set1_epi32(w0);
			h00 = _mm256_add_epi16(h00, _mm256_maddubs_epi16(x0, b));
			h01 = _mm256_add_epi16(h01, _mm256_maddubs_epi16(x1, b));
			b = _mm256_set1_epi32(w1);
			h10 = _mm256_add_epi16(h10, _mm256_maddubs_epi16(x0, b));
			h11 = _mm256_add_epi16(h11, _mm256_maddubs_epi16(x1, b));
			/* keeps GCC from regrouping the sums, which spills */
			__asm__("" : "+x"(h00), "+x"(h01), "+x"(h10), "+x"(h11));
		}
		a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(h00, ones));
		a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(h01, ones));
		a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(h10, ones));
		a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(h11, ones));
	}
	__m256i acc[XP_Q8A_R][XP_Q8A_C] = {{a00, a01}, {a10, a11}};
	consider_a(m, q, i0, b0, acc, k, cap, out, count, top, lo);
}

XP_Q8A_TARGET void xp_q8a_select(const xp_q8_matrix *m, const xp_q8_queries *q, int k, int cap, int32_t *out,
                                 int32_t *count, float *top, float *lo) {
	keep_init(q->nq, k, count, top, q->seed);
	/* 192 queries share each two blocks: the blocks stay in L1, the
	 * queries in L2 */
	for (int i0 = 0; i0 < q->nq; i0 += 192) {
		int i1 = i0 + 192 < q->nq ? i0 + 192 : q->nq;
		for (int b = 0; b < m->nb; b += XP_Q8A_C) {
			for (int i = i0; i < i1; i += XP_Q8A_R) {
				tile_a(m, q, i, b, k, cap, out, count, top, lo);
			}
		}
	}
	keep_final(q->nq, k, cap, out, count, top, lo);
}


#else

int xp_q8_supported(void) { return 0; }

void xp_q8a_select(const xp_q8_matrix *m, const xp_q8_queries *q, int k, int cap, int32_t *out, int32_t *count,
                   float *top, float *lo) {
	keep_none(q->nq, count); /* never called: the exact scan answers */
}

void xp_q8_select(const xp_q8_matrix *m, const xp_q8_queries *q, int k, int cap, int32_t *out, int32_t *count,
                  float *top, float *lo) {
	keep_none(q->nq, count); /* never called: the exact scan answers */
}

#endif
