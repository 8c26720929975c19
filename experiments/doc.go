// Package experiments owns the meaning of an experiment: the YAML schema of
// a config (dataset, tokenizer, embedding, candidate vocabulary, mechanisms
// and their parameter grids, where privatization applies, model, training,
// seeds, device, output), its validation with file:line errors, defaults and
// --set overrides, and the expansion of a config into Cells — one mechanism ×
// parameters × ε × mode × seed each — with the content hash that names a
// Cell everywhere else.
//
// Nothing here touches data, tensors or disk beyond reading the config: the
// runner executes Cells, results stores them.
package experiments
