// Package stats owns the statistics xp reports over replicated results:
// the mean with its sample standard deviation and Student-t interval over
// seeds, Wilson's interval of a proportion measured on a test set,
// McNemar's exact test, the paired sign-flip test between two classifiers
// scored on the same examples over several seeds, and Holm's adjustment of
// a family of p-values. It knows nothing of cells or records: package
// results applies it to tables, and the commands print what it returns.
package stats
