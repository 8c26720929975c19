// Package models owns xp's classifiers and taggers and the one place a
// model trains on libtorch through gotch: model definitions (BiLSTM,
// the baselines, the Tagger of the reconstruction attacker), the
// training loops (Train for a classifier, with validation, early
// stopping and checkpoints; TrainTagger for a tagger), evaluation and
// checkpoints.
//
// Every exported function returns errors instead of calling gotch's Must*
// helpers, which log.Fatal: one failing cell of a sweep must not end the
// sweep. Tensor code runs inside torchrt.Do so that libtorch's thread-local
// state stays on one OS thread.
package models
