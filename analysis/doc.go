// Package analysis owns the privacy analyses of xp: what a mechanism's
// output distribution reveals about a word, computed word by word rather
// than through a classifier, and the computations of the stages that
// combine their results. Each analysis is described in spec (its
// parameters and their rules) and defined exactly in docs/analyses.md:
//
//   - (neighbours): distance to the k-th nearest candidate (Feyisetan et
//     al. 2020, Fig. 1);
//   - (plausible-deniability): N_w and S_w per word (Feyisetan et al.
//     2020);
//   - (bayes-adversary): E_M and the lexicon's L_M (Xu et al. 2021);
//   - (query-attack): the queries a plurality vote needs (Chen et al.
//     2023);
//   - (dp-audit): the privacy loss of pairs of words against the bound
//     the mechanism's guarantee states;
//   - (reconstruction): a context-aware attacker that reconstructs the
//     original tokens (after Tong et al. 2025);
//   - (examples): privatizations of chosen words (Feyisetan et al. 2020,
//     Table 1);
//   - (mapping): the shape of CusText's output sets (Chen et al. 2023,
//     Table 4).
//
// Sampled analyses draw through the mechanism's own Privatize (one
// single-token record per draw), so they share its nearest-neighbour
// batching and its random streams: the same seed gives the same numbers.
// Where a mechanism's output distribution is known in closed form
// (mech.Exact), it is used instead of drawing.
package analysis
