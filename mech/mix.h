/* Mahalanobis' noise transform for package mech (mix.go says what it
 * computes and why its sums are bit for bit the Go loop's). Written for
 * xp. */
#ifndef XP_MECH_MIX_H
#define XP_MECH_MIX_H

/* 1 when this CPU runs the AVX-512 version. */
int xp_mix_wide(void);

/* out[i] = Σ_j t[j*dim + i]·row[j], each sum taken in the order
 * j = 0, 1, … from +0, one multiplication and one addition per term;
 * wide (xp_mix_wide's answer) picks the AVX-512 version. */
void xp_mix_row(const double *t, int dim, const double *row, double *out, int wide);

#endif
