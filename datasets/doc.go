// Package datasets owns bytes-to-examples: loaders for the corpora xp
// studies (IMDb, SST-2, QNLI, Twitter disaster tweets, the Hu & Liu opinion
// lexicon, Enron), their named and seeded splits, the tokenizer and
// vocabulary, pre-trained word embeddings (GloVe, word2vec, fastText) with
// their binary cache, and the data root (XP_DATA) and catalog from which all
// of them are found. Tests that need the real data read it through the data
// root and skip, saying so, when it is absent.
package datasets
