#!/usr/bin/env python3
"""The PyTorch twin of xp's biLSTM training loop, for speed comparisons.

BenchmarkTrainVsPyTorch (models/bench_test.go) writes the token ids of a
real dataset and runs this script on them right after training xp's model
on the same ids, so both are measured in one run on the same machine.

The model and loop mirror models.BiLSTM and models.Train:
  frozen embedding (vocab x dim) -> 1-layer bidirectional LSTM run as two
  unidirectional LSTMs over the padded batch, the backward one over each
  row reversed within its length -> final forward/backward states at each
  row's last true token -> dropout -> linear;
  Adam, cross-entropy, global gradient-norm clipping, batches of similar
  length (a seeded shuffle, chunks of 50 batches sorted by length, batch
  order shuffled), rows sorted by decreasing length within a batch,
  sequences cut to --maxlen.
--embedding FILE: the frozen embedding's values (vocab x dim float32,
little-endian, row-major), xp's own matrix, so that both sides compute on
the same numbers; without it they are random normal.
--warmup N: train on the first N batches untimed before the timed epoch
(first calls allocate and initialise; xp runs warm after its first round).
--packed runs nn.LSTM(bidirectional=True) over a PackedSequence instead:
the same function, but libtorch 1.13's CPU backward through it is
quadratic in the length (docs/models.md).

Input (--data): one example per line, "label<TAB>id id id ...".
--batches FILE: the batches to train on, one per line (example indices,
0-based), as xp's models.Buckets made them: the benchmark passes xp's own
batches so that both sides pad and compute exactly the same shapes
(without it, the script's buckets() approximates xp's bucketing).
Output: one JSON line {"examples": N, "seconds": S, "examples_per_sec": R,
"threads": T, "torch": version}.
"""

import argparse
import json
import random
import time

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence


class BiLSTM(nn.Module):
    def __init__(self, vocab, dim, hidden, classes, dropout, packed, weights=None):
        super().__init__()
        self.packed = packed
        if weights is None:
            weights = torch.randn(vocab, dim)
        self.embed = nn.Embedding.from_pretrained(weights, freeze=True, padding_idx=0)
        if packed:
            self.lstm = nn.LSTM(dim, hidden, num_layers=1, bidirectional=True)
        else:
            self.fwd = nn.LSTM(dim, hidden, batch_first=True)
            self.bwd = nn.LSTM(dim, hidden, batch_first=True)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(2 * hidden, classes)

    def forward(self, tokens, lengths):
        x = self.embed(tokens)  # batch x time x dim
        if self.packed:
            packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=True)
            _, (h, _) = self.lstm(packed)
            feat = torch.cat([h[-2], h[-1]], dim=1)
        else:
            rows, T, _ = x.shape
            t = torch.arange(T).unsqueeze(0)
            L = lengths.unsqueeze(1)
            rev = torch.where(t < L, L - 1 - t, t)  # reverse each row within its length
            x_rev = x.gather(1, rev.unsqueeze(2).expand_as(x))
            f, _ = self.fwd(x)
            b, _ = self.bwd(x_rev)
            last = (lengths - 1).view(rows, 1, 1).expand(rows, 1, f.shape[2])
            feat = torch.cat([f.gather(1, last).squeeze(1), b.gather(1, last).squeeze(1)], dim=1)
        return self.out(self.drop(feat))


def buckets(lengths, batch, seed, epoch):
    order = list(range(len(lengths)))
    r = random.Random(seed * 1000003 + epoch)
    r.shuffle(order)
    out = []
    chunk = 50 * batch
    for lo in range(0, len(order), chunk):
        c = sorted(order[lo:lo + chunk], key=lambda i: lengths[i])
        out.extend(c[b:b + batch] for b in range(0, len(c), batch))
    r.shuffle(out)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--vocab", type=int, required=True)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--maxlen", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--clip", type=float, default=5.0)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--packed", action="store_true")
    ap.add_argument("--batches", help="one batch per line: example indices (xp's batches, epoch 1)")
    ap.add_argument("--embedding", help="the embedding matrix: vocab x dim float32, little-endian, row-major")
    ap.add_argument("--warmup", type=int, default=0, help="train on this many batches untimed first")
    a = ap.parse_args()

    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    seqs, labels = [], []
    with open(a.data) as f:
        for line in f:
            y, _, ids = line.rstrip("\n").partition("\t")
            s = [int(t) for t in ids.split()][: a.maxlen] or [0]
            seqs.append(s)
            labels.append(int(y))
    classes = max(labels) + 1

    weights = None
    if a.embedding:
        weights = torch.from_file(a.embedding, size=a.vocab * a.dim, dtype=torch.float32).view(a.vocab, a.dim)
    model = BiLSTM(a.vocab, a.dim, a.hidden, max(classes, 2), a.dropout, a.packed, weights)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=a.lr)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    lengths = [len(s) for s in seqs]
    given = None
    if a.batches:
        with open(a.batches) as f:
            given = [[int(i) for i in line.split()] for line in f if line.strip()]

    def step(idx):
        idx = sorted(idx, key=lambda i: -lengths[i])
        T = lengths[idx[0]]
        tokens = torch.tensor([seqs[i] + [0] * (T - lengths[i]) for i in idx], dtype=torch.long)
        ys = torch.tensor([labels[i] for i in idx], dtype=torch.long)
        lens = torch.tensor([lengths[i] for i in idx], dtype=torch.long)
        loss = loss_fn(model(tokens, lens), ys)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), a.clip)
        opt.step()
        loss.item()  # xp reads every batch's loss too

    for idx in (given or buckets(lengths, a.batch, a.seed, 1))[: a.warmup]:
        step(idx)
    start = time.perf_counter()
    for epoch in range(1, a.epochs + 1):
        for idx in given if given is not None else buckets(lengths, a.batch, a.seed, epoch):
            step(idx)
    secs = time.perf_counter() - start
    n = len(seqs) * a.epochs
    print(json.dumps({"examples": n, "seconds": secs, "examples_per_sec": n / secs,
                      "threads": torch.get_num_threads(), "torch": torch.__version__, "packed": a.packed}))


if __name__ == "__main__":
    main()
