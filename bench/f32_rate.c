// The float32 kernel's own rate (mech/knn/f32.c) on one core, in
// multiply-adds per ns, beside bench/avx2_ports.c's register-only FMA
// peak: how near its roofline the exact scan already is. 44,256 random
// rows × 300 against 1,020 queries near them (k = 1), five repeats.
//   gcc -O3 -Imech/knn bench/f32_rate.c mech/knn/f32.c -lm -o /tmp/f32_rate && /tmp/f32_rate
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "f32.h"

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static float gauss(void) {
	double u = (rand() + 1.0) / (RAND_MAX + 2.0), v = (rand() + 1.0) / (RAND_MAX + 2.0);
	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

int main(void) {
	if (!xp_f32_supported()) {
		printf("the float32 kernel does not run on this CPU\n");
		return 0;
	}
	const int n = 44256, D = 300, nq = 1020, nb = n / 8, k = 1, cap = 1024;
	float *rows = malloc(sizeof(float) * n * D);
	for (long i = 0; i < (long)n * D; i++) {
		rows[i] = gauss() * 0.2f;
	}
	float *f = malloc(sizeof(float) * nb * 8 * D), *norm = malloc(sizeof(float) * n), *en = malloc(sizeof(float) * n);
	float mx0 = 0, mx1 = 0;
	for (int i = 0; i < n; i++) {
		double s = 0;
		for (int j = 0; j < D; j++) {
			f[((i / 8) * D + j) * 8 + i % 8] = rows[i * D + j];
			s += (double)rows[i * D + j] * rows[i * D + j];
		}
		norm[i] = s;
		en[i] = sqrt(s) * 1.0001;
		mx0 = fmaxf(mx0, norm[i]);
		mx1 = fmaxf(mx1, en[i]);
	}
	const float u = 0x1p-24f;
	float *q = malloc(sizeof(float) * nq * D), *qc = malloc(sizeof(float) * nq);
	for (int i = 0; i < nq; i++) {
		int w = rand() % n;
		double s = 0;
		for (int j = 0; j < D; j++) {
			q[i * D + j] = rows[w * D + j] + gauss() * 0.2f;
			s += (double)q[i * D + j] * q[i * D + j];
		}
		qc[i] = 2 * 1.01 * (2 * D * u * 1.0001 + 2.02 * u) * sqrt(s) * 1.000001;
	}
	xp_f32_matrix m = {f, norm, en, nb, D, {mx0, mx1}};
	xp_f32_queries x = {q, qc, 2 * 1.01 * 2.02 * u, nq};
	int32_t *out = malloc(sizeof(int32_t) * nq * cap), *count = malloc(sizeof(int32_t) * nq);
	float *top = malloc(sizeof(float) * nq * k), *lo = malloc(sizeof(float) * nq * cap);
	for (int rep = 0; rep < 5; rep++) {
		double t = now();
		xp_f32_select(&m, &x, k, cap, out, count, top, lo);
		t = now() - t;
		double kept = 0;
		for (int i = 0; i < nq; i++) {
			kept += count[i];
		}
		printf("%.1f multiply-adds per ns, %.2f rows kept per query\n", (double)n * D * nq / t * 1e-9, kept / nq);
	}
	return 0;
}
