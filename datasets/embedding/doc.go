// Package embedding owns pre-trained word vectors: reading GloVe text (no
// header), word2vec/fastText text (.vec, an "N D" header) and word2vec
// binary files, plain or inside .gz and .zip; the binary cache that makes
// every load after the first take a fraction of a second; and restriction
// to a word list or the N most frequent words.
//
// Rules for imperfect files, applied the same way everywhere:
//
//   - D is the header's dimension where the file has a header; otherwise
//     one less than the field count most of the first SniffRows rows
//     have, so one damaged row (a first row that lost a value) cannot
//     make every later row parse as a shorter vector whose word is glued
//     to a number.
//   - A row is a word followed by D numbers separated by spaces or tabs.
//     The word is everything before the last D fields, so words that
//     contain spaces (GloVe 840B has some) survive.
//   - A row with fewer than D + 1 fields, or a field among its last D that
//     is not a finite number, is an error naming the file and line (and
//     where D came from). Empty lines are skipped.
//   - A word seen a second time is skipped; the first vector wins.
//     Embedding.Skipped counts such rows.
//   - A word that is not valid UTF-8 (word2vec's GoogleNews binary has
//     some) is skipped and counted: no tokenizer output can match it.
//   - A header's vector count must match the rows read (a truncated
//     download is an error, not a smaller vocabulary).
package embedding
