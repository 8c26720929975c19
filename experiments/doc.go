// Package experiments owns the meaning of an experiment: the YAML schema of
// a config (dataset, tokenizer, embedding, mechanisms and their parameter
// grids, where privatization applies, model, training, seeds, device,
// output), its validation against spec's descriptors with an error at the
// file and line of the offending key (or at the --set that gave it), the
// defaults of absent keys (never of given ones), and the expansion of a
// config into Cells — mechanism × parameters × ε × mode × seed — with the
// content hash that names a Cell everywhere else. key.go lists everything
// a key depends on; Unkeyed lists what it does not.
//
// A config is read and validated once; Resolved writes it back with every
// default filled in, for worker processes and cluster tasks to run from.
// Nothing here touches tensors or data (the package does not depend on
// libtorch): the runner executes Cells, results stores them.
package experiments
