"""tests/gpu/fork.sh: 8 CUDA worker processes started with multiprocessing's "spawn" method (each
a fresh interpreter, exec'd with the parent's environment). The parent uses CUDA first; each
worker launches gp_fork_scale on a size of its own and reports "worker I pid P threads N"; the
parent reports "parent pid P threads N"."""
import multiprocessing as mp
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def work(i, q):
    import torch
    import scale
    x = torch.arange(1000 * (i + 1), dtype=torch.float32, device="cuda")
    threads = 0
    for _ in range(i + 1):
        y, n = scale.launch(x)
        threads += n
    torch.cuda.synchronize()
    ok = bool(torch.equal(y, x * 0.5))
    q.put((i, os.getpid(), threads, ok))


if __name__ == "__main__":
    import torch
    import scale
    x = torch.ones(5000, device="cuda")
    _, parent_threads = scale.launch(x)
    torch.cuda.synchronize()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=work, args=(i, q)) for i in range(8)]
    for p in procs:
        p.start()
    results = sorted(q.get(timeout=600) for _ in procs)
    for p in procs:
        p.join(600)
    for i, pid, threads, ok in results:
        print("worker %d pid %d threads %d %s" % (i, pid, threads, "ok" if ok else "WRONG"))
    print("parent pid %d threads %d" % (os.getpid(), parent_threads))
    bad = [p.exitcode for p in procs if p.exitcode != 0]
    sys.exit(1 if bad or not all(r[3] for r in results) else 0)
