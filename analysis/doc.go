// Package analysis owns the privacy analyses of xp: what a mechanism's
// output distribution reveals about a word, computed word by word rather
// than through a classifier. Each analysis is described in spec (its
// parameters and their rules) and defined exactly in docs/analyses.md:
//
//   - neighbours: distance to the k-th nearest candidate (Feyisetan et
//     al. 2020, Fig. 1);
//   - plausible-deniability: N_w and S_w per word (Feyisetan et al. 2020);
//   - bayes-adversary: E_M and the lexicon's L_M (Xu et al. 2021);
//   - query-attack: the queries a plurality vote needs (Chen et al. 2023);
//   - examples: privatizations of chosen words (Feyisetan et al. 2020,
//     Table 1).
//
// Sampled analyses draw through the mechanism's own Privatize (one
// single-token record per draw), so they share its nearest-neighbour
// batching and its random streams: the same seed gives the same numbers.
// Where a mechanism's output distribution is known in closed form
// (SanText, CusText), it is used instead of drawing.
package analysis
