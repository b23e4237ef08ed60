"""The body of the PyTorch anchors for braid-perf, gloo_perf.py (torch.distributed's
gloo backend, CPU tensors) and nccl_perf.py (its nccl backend, CUDA tensors):
one sweep, one check and one table layout for both, so that the two anchors
differ only where the libraries do.

The same sweep as `braid-perf <coll>` and mpi-perf: float sum, nccl-tests
columns and busbw factors, every result checked (after the first call of each
size and again after the timed ones). Started once per rank by any launcher
that sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (braid-run and `fabric
run` both do; torchrun too).

Timing is braid-perf's: one barrier, -n back-to-back calls, time / n on the
host clock, the slowest rank's time. On CUDA tensors the clock stops after
torch.cuda.synchronize() (as braid-perf --cuda-stream stops after
cudaStreamSynchronize), and CUDA events recorded around the same calls give a
second time, printed after #wrong, where parse.py does not read. Each rank uses
one intra-op thread, as every other library here runs one thread of
computation per rank.

Only the formatting and the argument parsing run at import; torch is imported
by main(), so that test_compare.py checks the table layout without torch.
"""
import argparse
import inspect
import os
import sys
import time

from parse import bus_factor, parse_size  # the sibling module, shared with compare.py

EXIT_UNSUPPORTED = 3
COLLECTIVES = ("allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "gather", "scatter", "reduce")
# What each backend lacks (the program says so and exits EXIT_UNSUPPORTED).
UNSUPPORTED = {
    "gloo": {"reducescatter": "torch.distributed's gloo backend has no reduce_scatter"},
    "nccl": {},
    "braid": {},  # braid through torch.distributed (plugins/torch), braid_torch_perf.py
}


def whole(coll):
    """Whether the size is one rank's whole vector (else n blocks of it)."""
    return coll in ("allreduce", "broadcast")


def parse_args(argv, backend, description):
    ap = argparse.ArgumentParser(prog=f"{backend}-perf", description=description)
    ap.add_argument("collective", choices=COLLECTIVES)
    ap.add_argument("-b", "--minbytes", default="8")
    ap.add_argument("-e", "--maxbytes", default="64M")
    ap.add_argument("-f", "--stepfactor", type=int, default=2)
    ap.add_argument("-n", "--iters", type=int, default=20)
    ap.add_argument("-w", "--warmup_iters", type=int, default=5)
    if backend == "nccl":
        ap.add_argument("--hostid-prefix", default="",
                        help="set NCCL_HOSTID=<prefix><RANK> before NCCL starts, so that ranks sharing a GPU "
                             "count as separate hosts (NCCL refuses two ranks on one GPU of one host) and talk "
                             "over its network transport; empty: leave NCCL_HOSTID alone")
    args = ap.parse_args(argv)
    if args.stepfactor < 2 or args.iters < 1 or args.warmup_iters < 0:
        ap.error("need -f >= 2, -n >= 1, -w >= 0")
    return args


# ---- Output: nccl-tests columns, out of place only (parse.py reads them) ----

def header_lines(title, events):
    """The title line and the two column header lines; events adds the CUDA
    events' time after #wrong."""
    cols = ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong")
    units = ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "")
    fmt = "#%11s %12s %8s %6s %6s %10s %8s %8s %6s" + (" %10s" if events else "")
    return [f"# {title}", fmt % (cols + (("evtime",) if events else ())),
            fmt % (units + (("(us)",) if events else ()))]


def row_line(size_bytes, count, us, busbw_factor, wrong, event_us=None):
    algbw = size_bytes / us / 1e3
    line = "%12d %12d %8s %6s %6d %10.2f %8.3f %8.3f %6d" % (size_bytes, count, "float", "sum", 0, us, algbw,
                                                             algbw * busbw_factor, wrong)
    return line if event_us is None else line + " %10.2f" % event_us


# ---- Running -----------------------------------------------------------------

class Case:
    """Buffers, the call and the expected result of one collective at one size,
    on device (a torch.device: cpu for gloo, cuda:N for nccl)."""

    def __init__(self, torch, dist, coll, rank, n, per, device):
        self.torch, self.dist, self.coll, self.rank, self.n, self.per = torch, dist, coll, rank, n, per
        # Gloo has no all_gather_into_tensor on CPU in every torch; NCCL's
        # list form would add a copy out of its one output buffer.
        self.into_tensor = device.type == "cuda"
        blocks = coll in ("alltoall", "reducescatter", "scatter")
        idx = torch.arange(per * n if blocks else per, dtype=torch.int64)
        self.send = ((idx + rank) % 7).float().to(device)  # small integers: float sums are exact

        def poison(m):
            return torch.full((m,), -1.0, device=device)

        if coll in ("allreduce", "reduce"):
            self.recv = torch.empty(per, device=device)
        elif coll == "allgather":
            self.recv = poison(per * n)
            self.views = list(self.recv.chunk(n))
        elif coll == "alltoall":
            self.recv = poison(per * n)
        elif coll == "reducescatter":
            self.recv = poison(per)
        elif coll == "gather":
            # Only the root passes a list (torch refuses one elsewhere) and
            # gets a result; the others' recv stays empty.
            self.recv = poison(per * n if rank == 0 else 0)
            self.views = list(self.recv.chunk(n)) if rank == 0 else None
        elif coll == "scatter":
            self.recv = poison(per)
            self.views = list(self.send.chunk(n)) if rank == 0 else None
        else:  # broadcast, in place; the root holds the data
            self.recv = self.send.clone() if rank == 0 else poison(per)

    def run(self):
        d = self.dist
        if self.coll == "allreduce":
            # all_reduce works in place; the copy stands in for the separate
            # send buffer the other libraries read from.
            self.recv.copy_(self.send)
            d.all_reduce(self.recv, op=d.ReduceOp.SUM)
        elif self.coll == "reduce":
            # In place too (the copy as above); only the root's recv is the
            # result, the others' are left as the backend leaves them.
            self.recv.copy_(self.send)
            d.reduce(self.recv, dst=0, op=d.ReduceOp.SUM)
        elif self.coll == "allgather":
            if self.into_tensor:
                d.all_gather_into_tensor(self.recv, self.send)
            else:
                d.all_gather(self.views, self.send)
        elif self.coll == "alltoall":
            d.all_to_all_single(self.recv, self.send)
        elif self.coll == "reducescatter":
            d.reduce_scatter_tensor(self.recv, self.send, op=d.ReduceOp.SUM)
        elif self.coll == "gather":
            d.gather(self.send, gather_list=self.views, dst=0)
        elif self.coll == "scatter":
            d.scatter(self.recv, scatter_list=self.views, src=0)
        else:
            d.broadcast(self.recv, src=0)

    def expected(self):
        t, n, per, rank = self.torch, self.n, self.per, self.rank
        if self.coll == "reduce" and rank != 0:
            return None  # only the root has a result
        if self.coll in ("allreduce", "reducescatter", "reduce"):
            # Reduce-scatter: this rank's block of the all-reduced vector.
            k = t.arange(per, dtype=t.int64) + (rank * per if self.coll == "reducescatter" else 0)
            return sum(((k + r) % 7).float() for r in range(n))
        if self.coll == "scatter":
            return ((rank * per + t.arange(per, dtype=t.int64)) % 7).float()  # the root's block `rank`
        if self.coll == "gather" and rank != 0:
            return t.empty(0)  # only the root has a result
        k = t.arange(per * n, dtype=t.int64)
        src, j = k // per, k % per
        if self.coll in ("allgather", "gather"):
            return ((j + src) % 7).float()
        if self.coll == "alltoall":
            return ((rank * per + j + src) % 7).float()
        return (t.arange(per, dtype=t.int64) % 7).float()

    def wrong(self):
        want = self.expected()
        if want is None:
            return 0  # nothing to check on this rank
        return int((self.recv.cpu() != want).sum().item())


class HostClock:
    """CPU tensors: a gloo call returns when it is done."""

    def __init__(self, dist):
        self.dist = dist

    def barrier(self):
        self.dist.barrier()

    def wait(self):
        pass

    def start(self):
        pass

    def stop(self):
        pass

    def event_us(self, iters):
        return None


class CudaClock:
    """CUDA tensors: torch queues NCCL calls on its own stream and makes the
    current stream wait for them, so an event recorded on the current stream
    after the calls, and torch.cuda.synchronize(), both follow their end."""

    def __init__(self, torch, dist, index):
        self.torch, self.dist, self.index = torch, dist, index
        self.begin = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def barrier(self):
        self.dist.barrier(device_ids=[self.index])
        self.torch.cuda.synchronize()

    def wait(self):
        self.torch.cuda.synchronize()

    def start(self):
        self.begin.record()

    def stop(self):
        self.end.record()

    def event_us(self, iters):
        return self.begin.elapsed_time(self.end) * 1e3 / iters  # ms -> us


def measure(case, clock, iters, warmup, device):
    """(slowest rank's host-clock us per call, slowest rank's CUDA-event us per
    call or None, wrong elements summed over ranks)."""
    torch, dist = case.torch, case.dist
    # The first call is checked on its own: a library that is right only once
    # warmed up is wrong. It counts as the first warm-up call.
    case.run()
    clock.wait()
    wrong = case.wrong()
    for _ in range(warmup - 1):
        case.run()
    clock.barrier()
    t0 = time.perf_counter()
    clock.start()
    for _ in range(iters):
        case.run()
    clock.stop()
    clock.wait()
    us = (time.perf_counter() - t0) / iters * 1e6
    event_us = clock.event_us(iters)
    wrong += case.wrong()  # each call starts from send again: the last one is checkable
    stats = torch.tensor([us, event_us or 0.0], dtype=torch.float64, device=device)
    dist.all_reduce(stats, op=dist.ReduceOp.MAX)
    total = torch.tensor([wrong], dtype=torch.int64, device=device)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return stats[0].item(), (stats[1].item() if event_us is not None else None), int(total.item())


def nccl_version(torch):
    v = torch.cuda.nccl.version()
    return ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)


def setup_nccl(torch, args, rank):
    """Per-rank NCCL settings and the rank's GPU (local rank % device count:
    every rank on device 0 with one GPU), before anything starts NCCL.
    Returns (device, init_process_group keywords, title suffix)."""
    if args.hostid_prefix:
        os.environ["NCCL_HOSTID"] = f"{args.hostid_prefix}{rank}"
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count == 0:
        sys.exit(f"nccl-perf: torch {torch.__version__} sees no CUDA device")
    local = int(os.environ.get("LOCAL_RANK", rank))
    index = local % count
    torch.cuda.set_device(index)
    device = torch.device("cuda", index)
    kwargs = {}
    if "device_id" in inspect.signature(torch.distributed.init_process_group).parameters:
        kwargs["device_id"] = device  # NCCL starts at init, bound to this GPU
    env = " ".join(f"{k}={os.environ[k]}" for k in ("NCCL_NET", "NCCL_SOCKET_IFNAME", "NCCL_DEBUG")
                   if k in os.environ)
    hostid = f"{args.hostid_prefix}<rank>" if args.hostid_prefix else "unset"
    suffix = (f", NCCL {nccl_version(torch)}, {device} {torch.cuda.get_device_name(index)}, "
              f"NCCL_HOSTID {hostid}" + (f", {env}" if env else ""))
    return device, kwargs, suffix


def main(argv, backend, description):
    args = parse_args(argv, backend, description)
    coll, prog = args.collective, f"{backend}-perf"
    if coll in UNSUPPORTED[backend]:
        # Every rank says it: the launcher may stop the others before rank 0 speaks.
        print(f"{prog}: {coll}: not supported ({UNSUPPORTED[backend][coll]})", file=sys.stderr)
        return EXIT_UNSUPPORTED
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    if backend == "nccl":
        device, kwargs, suffix = setup_nccl(torch, args, int(os.environ["RANK"]))
    else:
        device, kwargs, suffix = torch.device("cpu"), {}, ""
    dist.init_process_group(backend, init_method="env://", **kwargs)
    rank, n = dist.get_rank(), dist.get_world_size()
    clock = CudaClock(torch, dist, device.index) if device.type == "cuda" else HostClock(dist)
    events = device.type == "cuda"
    if rank == 0:
        title = f"{prog} {coll}, {n} ranks, float sum, torch {torch.__version__}{suffix}"
        print("\n".join(header_lines(title, events)), flush=True)
    any_wrong = False
    # Elements per rank of every size swept (sizes that move nothing are left out).
    pers, size = [], parse_size(args.minbytes)
    while size <= parse_size(args.maxbytes):
        per = size // 4 if whole(coll) else size // 4 // n
        if per > 0:
            pers.append(per)
        size *= args.stepfactor
    # As nccl-tests (and braid-perf): one untimed round at the largest size first.
    if pers and args.warmup_iters > 0:
        case = Case(torch, dist, coll, rank, n, pers[-1], device)
        measure(case, clock, 1, args.warmup_iters, device)
        del case
        if rank == 0:
            print(f"# warmed up: {args.warmup_iters} calls at {pers[-1]} elements before the sweep", flush=True)
    for per in pers:
        case = Case(torch, dist, coll, rank, n, per, device)
        us, event_us, wrong = measure(case, clock, args.iters, args.warmup_iters, device)
        del case  # free this size's buffers before the next, larger one
        size_bytes = (per if whole(coll) else per * n) * 4
        if rank == 0:
            print(row_line(size_bytes, per, us, bus_factor(coll, n), wrong, event_us), flush=True)
        any_wrong = any_wrong or wrong != 0
    clock.barrier()
    dist.destroy_process_group()
    return 1 if any_wrong else 0
