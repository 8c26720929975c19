/* Mahalanobis' noise transform for package mech (mix.go says what it
 * computes and why its sums are bit for bit the Go loop's). Written for
 * xp. */
#ifndef XP_MECH_MIX_H
#define XP_MECH_MIX_H

/* The widest version this CPU runs: 2 AVX-512, 1 AVX2, 0 the generic
 * one (SSE2 on x86-64). */
int xp_mix_level(void);

/* out[i] = Σ_j t[j*dim + i]·row[j], each sum taken in the order
 * j = 0, 1, … from +0, one multiplication and one addition per term;
 * level (at most xp_mix_level's answer) picks the version. */
void xp_mix_row(const double *t, int dim, const double *row, double *out, int level);

#endif
