// Package hf reads a local Hugging Face model folder — the layout
// `save_pretrained` writes and the hub serves — as xp's transformer
// classifiers need it: config.json (Config: the architecture and its
// sizes, refused by name where xp does not implement it), the weights
// in model.safetensors (Safetensors: every tensor's name, type, shape and
// bytes, checked against the file before any is read), and the
// tokenizer (Tokenizer, ReadTokenizer): vocab.txt for BERT and
// DistilBERT (WordPiece, BERT's basic tokenizer before it), vocab.json
// and merges.txt for RoBERTa (ByteBPE: GPT-2's byte-level BPE).
//
// Nothing here downloads: a user puts the folder under the data root.
// Every file is read through xp's bounded doors, so a truncated or lying
// file is one clear error, never an allocation its size does not back.
package hf
