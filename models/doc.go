// Package models owns xp's classifiers and the code that trains them on
// libtorch through gotch: model definitions, the training step and (as the
// project grows) the training loop, evaluation and checkpoints.
//
// Every exported function returns errors instead of calling gotch's Must*
// helpers, which log.Fatal: one failing cell of a sweep must not end the
// sweep. Tensor code runs inside torchrt.Do so that libtorch's thread-local
// state stays on one OS thread.
package models
