#!/usr/bin/python3
"""One rank of the torch.distributed backend's tests (tests/plugin/CMakeLists.txt
starts N of them with braid-run, which sets RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT).

  collectives  every torch.distributed collective on braid, for every dtype
               braid maps, each result compared exactly with one computed
               here (small integers: every order of summation gives the same
               bits); async works and their futures; the refusals
  ddp          DistributedDataParallel on braid: five SGD steps on a shard per
               rank give the parameters one process gets on the whole batch
  peer-exit    the last rank leaves without a word; the others' next
               all_reduce raises braid's error naming it (no hang)

Exits 0 when everything held, 1 on the first failure (with what and where),
77 when torch is not installed (ctest reports a skip).
"""
import os
import sys

try:
    import torch
    import torch.distributed as dist
except ImportError:
    print("torch is not installed (Debian: python3-torch): skipped")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "plugins", "torch"))
import braid_torch  # noqa: E402,F401 (registers the backend)

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.int8,
          torch.uint8]


def values(rank, n, dtype, salt=0):
    """n small non-negative integers, different per rank and salt."""
    return ((torch.arange(n) * 7 + rank * 3 + salt) % 5).to(dtype)


def check(what, got, want):
    if not torch.equal(got, want):
        raise AssertionError(f"{what}: got {got.tolist()[:12]} want {want.tolist()[:12]}")


def expect_error(what, fn, words):
    try:
        fn()
    except (ValueError, RuntimeError) as e:
        if not any(w in str(e) for w in words):
            raise AssertionError(f"{what}: the error '{e}' names none of {words}") from None
        return
    raise AssertionError(f"{what}: no error")


def test_collectives(rank, world):
    n = 37
    for dtype in DTYPES:
        inputs = [values(r, n, dtype) for r in range(world)]
        stacked = torch.stack([i.to(torch.int64) for i in inputs])
        for op, ref in ((dist.ReduceOp.SUM, stacked.sum(0)), (dist.ReduceOp.MAX, stacked.max(0).values),
                        (dist.ReduceOp.MIN, stacked.min(0).values)):
            t = inputs[rank].clone()
            dist.all_reduce(t, op=op)
            check(f"all_reduce {dtype} {op}", t, ref.to(dtype))
        t = inputs[rank].clone()
        dist.all_reduce(t, op=dist.ReduceOp.PRODUCT)
        if dtype not in (torch.int8, torch.uint8, torch.float16, torch.bfloat16):  # 4^world fits the rest
            check(f"all_reduce {dtype} product", t, stacked.prod(0).to(dtype))
        if dtype.is_floating_point:  # avg: sum / world in the type, as braid.h says
            t = (inputs[rank] * world).clone()
            dist.all_reduce(t, op=dist.ReduceOp.AVG)
            check(f"all_reduce {dtype} avg", t, stacked.sum(0).to(dtype))
        root = world - 1
        t = inputs[rank].clone()
        dist.broadcast(t, src=root)
        check(f"broadcast {dtype}", t, inputs[root])
        t = inputs[rank].clone()
        dist.reduce(t, dst=root)
        if rank == root:
            check(f"reduce {dtype}", t, stacked.sum(0).to(dtype))
        outs = [torch.full((n,), 9, dtype=dtype) for _ in range(world)]
        dist.all_gather(outs, inputs[rank])
        check(f"all_gather {dtype}", torch.stack(outs), torch.stack(inputs))
        flat = torch.full((world * n,), 9, dtype=dtype)
        dist.all_gather_into_tensor(flat, inputs[rank])
        check(f"all_gather_into_tensor {dtype}", flat, torch.cat(inputs))
        blocks = [values(rank, n, dtype, salt=b) for b in range(world)]
        want = sum(values(r, n, torch.int64, salt=rank) for r in range(world)).to(dtype)
        out = torch.full((n,), 9, dtype=dtype)
        dist.reduce_scatter(out, blocks)
        check(f"reduce_scatter {dtype}", out, want)
        out = torch.full((n,), 9, dtype=dtype)
        dist.reduce_scatter_tensor(out, torch.cat(blocks))
        check(f"reduce_scatter_tensor {dtype}", out, want)
        out = torch.full((world * n,), 9, dtype=dtype)
        dist.all_to_all_single(out, torch.cat(blocks))
        check(f"all_to_all_single {dtype}", out, torch.cat([values(r, n, dtype, salt=rank) for r in range(world)]))

    # all_to_all_single with uneven splits of 2-d rows: rank r sends r + p + 1 rows to p.
    cols = 3
    send_rows = [rank + p + 1 for p in range(world)]
    recv_rows = [p + rank + 1 for p in range(world)]
    send = torch.cat([torch.full((send_rows[p], cols), rank * 10 + p, dtype=torch.float32) for p in range(world)])
    recv = torch.full((sum(recv_rows), cols), -1.0)
    dist.all_to_all_single(recv, send, output_split_sizes=recv_rows, input_split_sizes=send_rows)
    check("all_to_all_single with splits", recv,
          torch.cat([torch.full((recv_rows[p], cols), p * 10 + rank, dtype=torch.float32) for p in range(world)]))
    # all_to_all of tensor lists of different sizes per peer.
    ins = [torch.full((p + 1,), rank * 100 + p, dtype=torch.int64) for p in range(world)]
    outs = [torch.full((rank + 1,), -1, dtype=torch.int64) for _ in range(world)]
    dist.all_to_all(outs, ins)
    for p in range(world):
        check(f"all_to_all from {p}", outs[p], torch.full((rank + 1,), p * 100 + rank, dtype=torch.int64))
    # gather and scatter at root 1 (or 0 alone).
    root = min(1, world - 1)
    mine = torch.full((4,), rank + 1.0)
    gathered = [torch.zeros(4) for _ in range(world)] if rank == root else None
    dist.gather(mine, gathered, dst=root)
    if rank == root:
        check("gather", torch.stack(gathered), torch.stack([torch.full((4,), r + 1.0) for r in range(world)]))
    got = torch.zeros(4)
    dist.scatter(got, [torch.full((4,), 50.0 + r) for r in range(world)] if rank == root else None, src=root)
    check("scatter", got, torch.full((4,), 50.0 + rank))
    # The same with the blocks of one tensor (gathered into, scattered from, in place).
    whole = torch.zeros(world * 3, dtype=torch.int32)
    dist.gather(torch.full((3,), rank * 7, dtype=torch.int32), list(whole.chunk(world)) if rank == root else None,
                dst=root)
    if rank == root:
        check("gather into one tensor", whole, torch.arange(world).repeat_interleave(3).to(torch.int32) * 7)
    whole = torch.arange(world * 3, dtype=torch.int32)
    got = torch.zeros(3, dtype=torch.int32)
    dist.scatter(got, list(whole.chunk(world)) if rank == root else None, src=root)
    check("scatter from one tensor", got, torch.arange(rank * 3, rank * 3 + 3, dtype=torch.int32))
    # send / recv around the ring, even ranks first.
    if world > 1:
        right, left = (rank + 1) % world, (rank - 1) % world
        out, back = torch.full((5,), float(rank)), torch.zeros(5)
        if rank % 2 == 0:
            dist.send(out, right)
            dist.recv(back, left)
        else:
            dist.recv(back, left)
            dist.send(out, right)
        check("send / recv", back, torch.full((5,), float(left)))
    dist.barrier()
    # batch_isend_irecv around the ring with 64 MiB each way: every rank sends
    # before it receives, which only completes if the two progress together.
    if world > 1:
        right, left = (rank + 1) % world, (rank - 1) % world
        out, back = torch.full((1 << 24,), float(rank)), torch.zeros(1 << 24)
        ops = [dist.P2POp(dist.isend, out, right), dist.P2POp(dist.irecv, back, left)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        if back[0].item() != left or back[-1].item() != left:
            raise AssertionError(f"batch_isend_irecv: got {back[0].item()} .. {back[-1].item()}, want {left}")
        del out, back

    # Async: several works in flight, completed through wait() and through futures.
    tensors = [torch.full((1 << 16,), float(rank + k)) for k in range(4)]
    works = [dist.all_reduce(t, async_op=True) for t in tensors]
    futures = [w.get_future() for w in works[2:]]
    for w in works[:2]:
        w.wait()
    torch.futures.wait_all(futures)
    for k, t in enumerate(tensors):
        check(f"async all_reduce {k}", t, torch.full((1 << 16,), float(sum(range(world)) + world * k)))
    if not all(w.is_completed() for w in works):
        raise AssertionError("a waited work is not completed")

    # A subgroup (its own braid communicator) of the first and last ranks.
    members = sorted({0, world - 1})
    sub = dist.new_group(members)
    if rank in members:
        t = torch.full((8,), float(rank + 1))
        dist.all_reduce(t, group=sub)
        check("all_reduce in a subgroup", t, torch.full((8,), float(sum(m + 1 for m in members))))

    # Refusals name what is wrong and leave the group working.
    expect_error("non-contiguous", lambda: dist.all_reduce(torch.zeros(4, 4).t()), ["contiguous"])
    expect_error("int16", lambda: dist.all_reduce(torch.zeros(4, dtype=torch.int16)), ["int16"])
    expect_error("bool sum", lambda: dist.all_reduce(torch.zeros(4, dtype=torch.bool)), ["bool"])
    flags = torch.tensor([rank == 0, True, False])
    dist.all_reduce(flags, op=dist.ReduceOp.MAX)  # logical or
    check("bool max", flags, torch.tensor([True, True, False]))
    expect_error("bitwise op", lambda: dist.all_reduce(torch.zeros(4, dtype=torch.int32), op=dist.ReduceOp.BAND),
                 ["BAND"])
    expect_error("bad splits", lambda: dist.all_to_all_single(torch.zeros(world), torch.zeros(world),
                                                              input_split_sizes=[2] * world), ["split"])
    t = torch.ones(3)
    dist.all_reduce(t)
    check("all_reduce after refusals", t, torch.full((3,), float(world)))


def test_ddp(rank, world):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).double()
    reference = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).double()
    reference.load_state_dict(model.state_dict())
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.0005)  # several buckets
    g = torch.Generator().manual_seed(1)
    x = torch.randn(world * 6, 8, generator=g, dtype=torch.float64)
    y = torch.randn(world * 6, 1, generator=g, dtype=torch.float64)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    shard = slice(rank * 6, rank * 6 + 6)
    for _ in range(5):
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x[shard]), y[shard]).backward()
        opt.step()
        ref_opt.zero_grad()
        torch.nn.functional.mse_loss(reference(x), y).backward()  # the whole batch in one process
        ref_opt.step()
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        if not torch.allclose(p, q, rtol=0, atol=1e-12):
            raise AssertionError(f"ddp parameter {name} differs by {(p - q).abs().max().item()}")


def test_peer_exit(rank, world):
    t = torch.ones(1 << 12)
    for _ in range(2):
        dist.all_reduce(t)
    if rank == world - 1:
        os._exit(0)  # no goodbye: as a crashed or killed rank leaves
    try:
        dist.all_reduce(t)
    except RuntimeError as e:
        if f"rank {world - 1}" not in str(e):
            raise AssertionError(f"the error does not name rank {world - 1}: {e}") from None
        return
    raise AssertionError(f"all_reduce succeeded without rank {world - 1}")


def main():
    scenario = sys.argv[1]
    dist.init_process_group("braid")
    rank, world = dist.get_rank(), dist.get_world_size()
    tests = {"collectives": test_collectives, "ddp": test_ddp, "peer-exit": test_peer_exit}
    try:
        tests[scenario](rank, world)
    except AssertionError as e:
        print(f"rank {rank}: FAILED: {e}", flush=True)
        os._exit(1)
    if scenario != "peer-exit":  # there the group is broken: nothing more to do on it
        dist.barrier()
        dist.destroy_process_group()
    print(f"rank {rank}: {scenario} passed", flush=True)


if __name__ == "__main__":
    main()
