#!/usr/bin/env python3
"""The PyTorch twin of xp's BERT fine-tuning step, for speed comparisons.

BenchmarkBertStepVsPyTorch (models/bench_test.go) times xp's models.Bert
training steps and then this script's on the same shapes and threads, in
one run on the same machine, interleaved over several rounds.

The model mirrors models.Bert, which follows Hugging Face's
BertForSequenceClassification: word, position and token-type embeddings
summed and layer-normalised; post-LN encoder layers (self-attention with
an additive mask, exact GELU feed-forward); tanh pooler over the first
token; dropout 0.1 throughout; linear head. A step is forward,
cross-entropy, backward, gradient-norm clipping to 1 and AdamW (no weight
decay) -- what models.Bert.Step does. Weights are random (normal 0.02):
speed does not depend on them.

--device cuda runs it on the GPU (synchronising before the clock stops)
and --precision bf16 runs the forward pass and the loss under
torch.autocast(dtype=torch.bfloat16), as xp's precision: bf16 does.

Output: one JSON line {"examples_per_sec": R, "seconds": S, "steps": N,
"threads": T, "torch": version}.
"""

import argparse
import json
import math
import time

import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self, d, heads, inter, p):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.o, self.ln1 = nn.Linear(d, d), nn.LayerNorm(d, eps=1e-12)
        self.i, self.out, self.ln2 = nn.Linear(d, inter), nn.Linear(inter, d), nn.LayerNorm(d, eps=1e-12)
        self.drop = nn.Dropout(p)

    def forward(self, x, mask):
        b, t, d = x.shape
        h = self.heads

        def split(y):
            return y.view(b, t, h, d // h).permute(0, 2, 1, 3)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        s = q.matmul(k.transpose(-1, -2)) * (1 / math.sqrt(d // h)) + mask
        a = self.drop(s.softmax(-1)).matmul(v).permute(0, 2, 1, 3).contiguous().view(b, t, d)
        x = self.ln1(self.drop(self.o(a)) + x)
        return self.ln2(self.drop(self.out(nn.functional.gelu(self.i(x)))) + x)


class Bert(nn.Module):
    def __init__(self, vocab, d, layers, heads, inter, positions, classes, p):
        super().__init__()
        self.word, self.pos, self.token_type = nn.Embedding(vocab, d), nn.Embedding(positions, d), nn.Embedding(2, d)
        self.ln, self.drop = nn.LayerNorm(d, eps=1e-12), nn.Dropout(p)
        self.layers = nn.ModuleList(Layer(d, heads, inter, p) for _ in range(layers))
        self.pool, self.head = nn.Linear(d, d), nn.Linear(d, classes)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0, 0.02)

    def forward(self, ids, types, mask):
        t = ids.shape[1]
        x = self.word(ids) + self.pos.weight[:t] + self.token_type(types)
        x = self.drop(self.ln(x))
        for layer in self.layers:
            x = layer(x, mask)
        return self.head(self.drop(torch.tanh(self.pool(x[:, 0]))))


def main():
    ap = argparse.ArgumentParser()
    for k, v in [("vocab", 30522), ("hidden", 768), ("layers", 12), ("heads", 12), ("intermediate", 3072), ("batch", 32), ("len", 128),
                 ("steps", 3), ("warmup", 1), ("threads", 0)]:
        ap.add_argument("--" + k, type=int, default=v)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    a = ap.parse_args()
    dev = torch.device(a.device)
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    m = Bert(a.vocab, a.hidden, a.layers, a.heads, a.intermediate, max(512, a.len), 2, 0.1).to(dev)
    m.train()
    opt = torch.optim.AdamW(m.parameters(), lr=2e-5, weight_decay=0)
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(5, a.vocab, (a.batch, a.len), generator=g).to(dev)
    types = torch.zeros_like(ids)
    mask = torch.zeros(a.batch, 1, 1, a.len, device=dev)
    labels = torch.randint(0, 2, (a.batch,), generator=g).to(dev)
    amp = a.precision == "bf16"

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def step():
        with torch.autocast(device_type=dev.type, dtype=torch.bfloat16, enabled=amp):
            loss = nn.functional.cross_entropy(m(ids, types, mask), labels)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()

    for _ in range(a.warmup):
        step()
    sync()
    start = time.perf_counter()
    for _ in range(a.steps):
        step()
    sync()
    secs = time.perf_counter() - start
    print(json.dumps({"examples_per_sec": a.steps * a.batch / secs, "seconds": secs, "steps": a.steps,
                      "threads": torch.get_num_threads(), "torch": torch.__version__, "device": a.device, "precision": a.precision}))


if __name__ == "__main__":
    main()
