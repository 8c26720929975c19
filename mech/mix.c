/* Mahalanobis' noise transform: see mix.h and mix.go. Compiled with
 * -std=c11, whose default is -ffp-contract=off (cgo does not pass that
 * flag itself): no multiplication and addition fuse, every term is
 * rounded twice, as Go (GOAMD64=v1) rounds it; TestMixRow fails where
 * they fuse. Each output's sum runs
 * over j in order; the outputs are independent, so the compiler may
 * compute several at once in vector lanes without changing any. */
#include "mix.h"

#define XP_MIX_BODY                                                                                        \
	for (int i = 0; i < dim; i++) {                                                                    \
		out[i] = 0.0;                                                                              \
	}                                                                                                  \
	for (int j = 0; j < dim; j++) {                                                                    \
		const double x = row[j], *col = t + (long)j * dim;                                         \
		for (int i = 0; i < dim; i++) {                                                            \
			out[i] = out[i] + col[i] * x;                                                      \
		}                                                                                          \
	}

static void mix_generic(const double *restrict t, int dim, const double *restrict row, double *restrict out) {
	XP_MIX_BODY
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static void mix_avx2(const double *restrict t, int dim, const double *restrict row,
                                                     double *restrict out) {
	XP_MIX_BODY
}

__attribute__((target("avx512f"))) static void mix_avx512(const double *restrict t, int dim,
                                                          const double *restrict row, double *restrict out) {
	XP_MIX_BODY
}

int xp_mix_level(void) {
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		return 2;
	}
	return __builtin_cpu_supports("avx2") ? 1 : 0;
}

void xp_mix_row(const double *t, int dim, const double *row, double *out, int level) {
	switch (level) {
	case 2:
		mix_avx512(t, dim, row, out);
		break;
	case 1:
		mix_avx2(t, dim, row, out);
		break;
	default:
		mix_generic(t, dim, row, out);
	}
}
#else
int xp_mix_level(void) { return 0; }

void xp_mix_row(const double *t, int dim, const double *row, double *out, int level) { mix_generic(t, dim, row, out); }
#endif
