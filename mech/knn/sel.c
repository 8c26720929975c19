/* The float32 path's selection (sel.h, sel.go). Written for xp. */
#include "sel.h"

#include <math.h>

void xp_smallest(const float *s, int nq, int n, int kc, float *vals, int64_t *idx) {
	for (int i = 0; i < nq; i++) {
		const float *row = s + (int64_t)i * n;
		float *v = vals + (int64_t)i * kc;
		int64_t *x = idx + (int64_t)i * kc;
		int m = 0; /* taken so far, v[0..m) ascending */
		for (int j = 0; j < n; j++) {
			float a = row[j];
			if (m == kc ? !(a < v[kc - 1]) : isnan(a)) {
				continue; /* not below the kc-th: an equal score keeps the lower column */
			}
			int p = m < kc ? m++ : kc - 1;
			while (p > 0 && v[p - 1] > a) {
				v[p] = v[p - 1];
				x[p] = x[p - 1];
				p--;
			}
			v[p] = a;
			x[p] = j;
		}
		for (int j = 0; m < kc && j < n; j++) { /* fewer than kc scores that are not NaN: NaN last, as libtorch's top-k */
			if (isnan(row[j])) {
				v[m] = row[j];
				x[m++] = j;
			}
		}
	}
}
