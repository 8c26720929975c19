#!/usr/bin/env python3
"""Writes a randomly initialised BERT checkpoint in Hugging Face's layout.

    python3 bench/random_bert.py OUT --vocab-from TSV [--hidden 768 --layers 12 ...]

For timing fine-tuning where no pretrained weights can be fetched: OUT
gets config.json (model_type bert), vocab.txt and model.safetensors with
BertForSequenceClassification's names ("bert." before the encoder's, a
2-class "classifier"), weights normal with standard deviation 0.02,
biases zero, layer norms one. vocab.txt holds the special pieces, then
the lower-cased words of the first column of TSV (a header line skipped)
by frequency, then "[unusedN]" up to --vocab pieces: each frequent word
one piece, so a text's length in pieces is about its length in words, as
with bert-base-uncased on English text. The speed of a step does not
depend on the weights.

Needs torch only (the safetensors file is written by hand: an 8-byte
header length, the JSON header, the raw little-endian float32 data).
"""

import argparse
import collections
import json
import os
import re
import struct

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--vocab-from", required=True)
    for k, v in [("vocab", 30522), ("hidden", 768), ("layers", 12), ("heads", 12), ("intermediate", 3072), ("positions", 512)]:
        ap.add_argument("--" + k, type=int, default=v)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)

    words = collections.Counter()
    with open(a.vocab_from, encoding="utf-8") as f:
        next(f)
        for line in f:
            words.update(re.findall(r"\w+|[^\w\s]", line.split("\t")[0].lower()))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab += [w for w, _ in words.most_common(a.vocab - len(vocab))]
    vocab += ["[unused%d]" % i for i in range(a.vocab - len(vocab))]
    with open(os.path.join(a.out, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump({"model_type": "bert", "architectures": ["BertForSequenceClassification"], "vocab_size": a.vocab,
                   "hidden_size": a.hidden, "num_hidden_layers": a.layers, "num_attention_heads": a.heads,
                   "intermediate_size": a.intermediate, "hidden_act": "gelu", "max_position_embeddings": a.positions,
                   "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.1,
                   "attention_probs_dropout_prob": 0.1}, f, indent=1)

    g = torch.Generator().manual_seed(1)
    D, I = a.hidden, a.intermediate
    shapes = {"embeddings.word_embeddings.weight": (a.vocab, D), "embeddings.position_embeddings.weight": (a.positions, D),
              "embeddings.token_type_embeddings.weight": (2, D), "embeddings.LayerNorm.weight": (D,), "embeddings.LayerNorm.bias": (D,)}
    for l in range(a.layers):
        p = "encoder.layer.%d." % l
        for n in ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"]:
            shapes[p + n + ".weight"], shapes[p + n + ".bias"] = (D, D), (D,)
        shapes[p + "attention.output.LayerNorm.weight"], shapes[p + "attention.output.LayerNorm.bias"] = (D,), (D,)
        shapes[p + "intermediate.dense.weight"], shapes[p + "intermediate.dense.bias"] = (I, D), (I,)
        shapes[p + "output.dense.weight"], shapes[p + "output.dense.bias"] = (D, I), (D,)
        shapes[p + "output.LayerNorm.weight"], shapes[p + "output.LayerNorm.bias"] = (D,), (D,)
    shapes["pooler.dense.weight"], shapes["pooler.dense.bias"] = (D, D), (D,)
    tensors = {}
    for name, shape in shapes.items():
        if name.endswith("LayerNorm.weight"):
            t = torch.ones(shape)
        elif name.endswith(".bias"):
            t = torch.zeros(shape)
        else:
            t = torch.normal(0.0, 0.02, shape, generator=g)
        tensors["bert." + name] = t
    tensors["classifier.weight"] = torch.normal(0.0, 0.02, (2, D), generator=g)
    tensors["classifier.bias"] = torch.zeros(2)

    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        b = t.contiguous().to(torch.float32).numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = os.path.join(a.out, ".model.safetensors.part")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, os.path.join(a.out, "model.safetensors"))
    print("random_bert: %s: %d tensors, %d parameters, %d pieces" % (a.out, len(tensors), sum(t.numel() for t in tensors.values()), a.vocab))


if __name__ == "__main__":
    main()
