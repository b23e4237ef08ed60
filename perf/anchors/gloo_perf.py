#!/usr/bin/python3
"""gloo-perf: the Gloo anchor for braid-perf, through Debian's PyTorch
(python3-torch, torch.distributed with the gloo backend).

The same sweep as `braid-perf <coll>` and mpi-perf: float sum, nccl-tests
columns and busbw factors, every result checked. Started once per rank by any
launcher that sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (braid-run and
`fabric run` both do; torchrun too):

  build/tools/braid-run/braid-run -n 4 -- /usr/bin/python3 perf/anchors/gloo_perf.py allreduce -b 8 -e 1M -f 4

Gloo picks its interface from GLOO_SOCKET_IFNAME (lo on loopback, fab0 on the
fabric). Collectives: allreduce (all_reduce), allgather (all_gather into views
of one tensor: gloo has no all_gather_into_tensor), alltoall (all_to_all_single),
broadcast (root 0). reducescatter: torch's gloo backend has no reduce_scatter;
the program says so and exits 3, and the sweep reports it as unsupported.

Timing is braid-perf's: one barrier, -n back-to-back calls, time / n, the
slowest rank's time. Each rank uses one intra-op thread, as every other
library here runs one thread of computation per rank.
"""
import argparse
import sys
import time

EXIT_UNSUPPORTED = 3
COLLECTIVES = ("allreduce", "allgather", "reducescatter", "alltoall", "broadcast")
UNSUPPORTED = {"reducescatter": "torch.distributed's gloo backend has no reduce_scatter"}


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    suffix = text[-1:].upper()
    if suffix in units:
        return int(float(text[:-1]) * units[suffix])
    return int(float(text))


def bus_factor(coll, n):
    if coll == "allreduce":
        return 2.0 * (n - 1) / n
    if coll in ("allgather", "reducescatter", "alltoall"):
        return (n - 1) / n
    return 1.0


def whole(coll):
    return coll in ("allreduce", "broadcast")


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="gloo-perf", description=__doc__.split("\n\n")[0])
    ap.add_argument("collective", choices=COLLECTIVES)
    ap.add_argument("-b", "--minbytes", default="8")
    ap.add_argument("-e", "--maxbytes", default="64M")
    ap.add_argument("-f", "--stepfactor", type=int, default=2)
    ap.add_argument("-n", "--iters", type=int, default=20)
    ap.add_argument("-w", "--warmup_iters", type=int, default=5)
    args = ap.parse_args(argv)
    if args.stepfactor < 2 or args.iters < 1 or args.warmup_iters < 0:
        ap.error("need -f >= 2, -n >= 1, -w >= 0")
    return args


class Case:
    """Buffers, the call and the expected result of one collective at one size."""

    def __init__(self, torch, dist, coll, rank, n, per):
        self.torch, self.dist, self.coll, self.rank, self.n, self.per = torch, dist, coll, rank, n, per
        idx = torch.arange(per * n if coll == "alltoall" else per, dtype=torch.int64)
        self.send = ((idx + rank) % 7).float()  # small integers: float sums are exact
        if coll == "allreduce":
            self.recv = torch.empty(per)
        elif coll == "allgather":
            self.recv = torch.full((per * n,), -1.0)
            self.views = list(self.recv.chunk(n))
        elif coll == "alltoall":
            self.recv = torch.full((per * n,), -1.0)
        else:  # broadcast, in place; the root holds the data
            self.recv = self.send.clone() if rank == 0 else torch.full((per,), -1.0)

    def run(self):
        d = self.dist
        if self.coll == "allreduce":
            # all_reduce works in place; the copy stands in for the separate
            # send buffer the other libraries read from.
            self.recv.copy_(self.send)
            d.all_reduce(self.recv, op=d.ReduceOp.SUM)
        elif self.coll == "allgather":
            d.all_gather(self.views, self.send)
        elif self.coll == "alltoall":
            d.all_to_all_single(self.recv, self.send)
        else:
            d.broadcast(self.recv, src=0)

    def expected(self):
        t, n, per, rank = self.torch, self.n, self.per, self.rank
        if self.coll == "allreduce":
            i = t.arange(per, dtype=t.int64)
            return sum(((i + r) % 7).float() for r in range(n))
        k = t.arange(per * n, dtype=t.int64)
        src, j = k // per, k % per
        if self.coll == "allgather":
            return ((j + src) % 7).float()
        if self.coll == "alltoall":
            return ((rank * per + j + src) % 7).float()
        return (t.arange(per, dtype=t.int64) % 7).float()

    def wrong(self):
        return int((self.recv != self.expected()).sum().item())


def measure(case, iters, warmup):
    """(slowest rank's us per call, wrong elements summed over ranks)."""
    torch, dist = case.torch, case.dist
    for _ in range(warmup):
        case.run()
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(iters):
        case.run()
    us = (time.perf_counter() - t0) / iters * 1e6
    stats = torch.tensor([us], dtype=torch.float64)
    dist.all_reduce(stats, op=dist.ReduceOp.MAX)
    wrong = torch.tensor([case.wrong()], dtype=torch.int64)
    dist.all_reduce(wrong, op=dist.ReduceOp.SUM)
    return stats.item(), int(wrong.item())


def main(argv):
    args = parse_args(argv)
    coll = args.collective
    if coll in UNSUPPORTED:
        # Every rank says it: the launcher may stop the others before rank 0 speaks.
        print(f"gloo-perf: {coll}: not supported ({UNSUPPORTED[coll]})", file=sys.stderr)
        return EXIT_UNSUPPORTED
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="env://")
    rank, n = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        print(f"# gloo-perf {coll}, {n} ranks, float sum, torch {torch.__version__}")
        print("#%11s %12s %8s %6s %6s %10s %8s %8s %6s" % ("size", "count", "type", "redop", "root", "time",
                                                          "algbw", "busbw", "#wrong"))
        print("#%11s %12s %8s %6s %6s %10s %8s %8s %6s" % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
                                                          "(GB/s)", ""))
    any_wrong = False
    size = parse_size(args.minbytes)
    while size <= parse_size(args.maxbytes):
        per = size // 4 if whole(coll) else size // 4 // n
        if per > 0:
            us, wrong = measure(Case(torch, dist, coll, rank, n, per), args.iters, args.warmup_iters)
            size_bytes = (per if whole(coll) else per * n) * 4
            if rank == 0:
                algbw = size_bytes / us / 1e3
                print("%12d %12d %8s %6s %6d %10.2f %8.3f %8.3f %6d" % (size_bytes, per, "float", "sum", 0, us,
                                                                       algbw, algbw * bus_factor(coll, n), wrong),
                      flush=True)
            any_wrong = any_wrong or wrong != 0
        size *= args.stepfactor
    dist.barrier()
    dist.destroy_process_group()
    return 1 if any_wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
