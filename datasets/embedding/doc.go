// Package embedding owns pre-trained word vectors: reading GloVe text (no
// header), word2vec/fastText text (.vec, an "N D" header) and word2vec
// binary files, plain or inside .gz and .zip; the binary cache that makes
// every load after the first take a fraction of a second; and restriction
// to a word list or the N most frequent words.
//
// Rules for imperfect files, applied the same way everywhere:
//
//   - A row is a word followed by D numbers separated by spaces or tabs.
//     The word is everything before the last D fields, so words that
//     contain spaces (GloVe 840B has some) survive.
//   - A row with fewer than D numbers, or a field that is not a number, is
//     an error naming the file and line. Empty lines are skipped.
//   - A word seen a second time is skipped; the first vector wins.
//     Embedding.Skipped counts such rows.
//   - A word that is not valid UTF-8 (word2vec's GoogleNews binary has
//     some) is skipped and counted: no tokenizer output can match it.
//   - A header's vector count must match the rows read (a truncated
//     download is an error, not a smaller vocabulary).
package embedding
