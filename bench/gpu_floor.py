"""gpu_floor.py: what libtorch itself does per search batch on a GPU.

Times, from Python (PyTorch on the GPU node), the device work of one
exact-search batch on a 44,252 x 300 candidate matrix (random values: the
time does not depend on them), each step synchronised, as rows per second:
the plain float32 product (BenchmarkScoring's reference), the float32
path's addmm + topk + copies back with the queries copied from pageable
host memory, the same with mech/knn's chunked selection (smallestK), and the int8 path's sequence (_int_mm, scaling, bounds, two
topks, copies back). The gap between these and BenchmarkScoring's
tokens/s is the cost outside libtorch's kernels (Go, cgo, gotch, the
host's ranking). Run by bench/gpu_check.sh (step floor).
"""
import time

import torch

dev = "cuda"
n, d, k, kc = 44252, 300, 1, 9
dr = 304  # rows padded as the int8 index pads them
torch.manual_seed(0)
E = torch.randn(n, d, device=dev)
et2 = (-2 * E).t().contiguous()
enorm = (E * E).sum(1).unsqueeze(0)
E8 = torch.randint(-127, 128, ((n + 7) // 8 * 8, dr), dtype=torch.int8, device=dev)
e8t = E8.t()
scale = torch.rand(1, E8.shape[0], device=dev)
rowsH = torch.rand(4, E8.shape[0], device=dev)
rowsC = torch.rand(3, E8.shape[0], device=dev)
norm8 = torch.rand(1, E8.shape[0], device=dev)


def timed(f, reps=20):
    f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2]


for b in (1024, 4096):
    qh = torch.randn(b, d)
    qd = qh.to(dev)
    q8h = torch.randint(-127, 128, (b, dr), dtype=torch.int8)
    m2t = torch.rand(b, 1)
    qh4 = torch.rand(b, 4)
    qc3 = torch.rand(b, 3)

    def product():
        qd.mm(et2)

    def float32_path():
        q = qh.to(dev)
        s = torch.addmm(enorm, q, et2)
        v, i = s.topk(kc, 1, largest=False, sorted=True)
        v.cpu()
        i.cpu()

    def chunked_path():  # the float32 path with smallestK's chunked selection
        q = qh.to(dev)
        s = torch.addmm(enorm, q, et2)
        w = n // 64 * 64
        mins = torch.cat([s[:, :w].view(b, -1, 64).amin(2), s[:, w:].amin(1, keepdim=True)], 1)
        _, cid = mins.topk(kc, 1, largest=False, sorted=False)
        cols = (cid * 64).unsqueeze(2).add(torch.arange(64, device=dev)).view(b, -1)
        cand = s.gather(1, cols.clamp(max=n - 1))
        cand.masked_fill_(cols >= n, float("inf"))
        v, p = cand.topk(kc, 1, largest=False, sorted=True)
        v.cpu()
        cols.gather(1, p).cpu()

    def int8_path():
        q = q8h.to(dev)
        a = torch._int_mm(q, e8t).float()
        a.mul_(scale)
        a.mul_(m2t.to(dev))
        a.add_(norm8)
        delta = torch.minimum(qh4.to(dev).mm(rowsH), qc3.to(dev).mm(rowsC))
        delta.mul_(1.01)
        up = a + delta
        a.sub_(delta)
        tv, _ = up.topk(k, 1, largest=False, sorted=True)
        kth = tv.select(1, k - 1)
        lv, li = a.topk(k + 24, 1, largest=False, sorted=True)
        kth.cpu()
        lv.cpu()
        li.cpu()

    for name, f in (("product", product), ("float32 path", float32_path), ("float32 path, chunked top-k", chunked_path), ("int8 path", int8_path)):
        t = timed(f)
        print(f"floor batch={b} {name}: {t * 1e3:.3f} ms/batch, {b / t:,.0f} rows/s")

with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(5):
        chunked_path()
    torch.cuda.synchronize()
print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12))
