// Package metrics owns the numbers a cell produces and their definitions:
// classification scores (accuracy, per-class precision, recall and F1,
// macro-F1), training-epoch statistics, and the privatization report
// (tokens, in-vocabulary tokens left unchanged, out-of-vocabulary tokens
// passed through, stopwords kept by rule) with the warnings derived from
// it. It is plain Go: models and mech fill these types, results stores and
// renders them, and neither of the latter needs libtorch.
package metrics
