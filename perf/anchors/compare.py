#!/usr/bin/env python3
"""braid against the libraries users would otherwise pick (Open MPI, MPICH,
Gloo through PyTorch; NCCL through PyTorch on a GPU), same sizes, same rank
counts, one run, on loopback or on the emulated fabric (tools/fabric, root
needed):

  tools/scripts/perf-compare.sh --ranks 2,4 --sizes 8:32M --reps 3
  tools/scripts/perf-compare.sh --fabric hosts=4,rate=1gbit --sizes 64K:64M --reps 3
  tools/scripts/gpu-compare.sh --build build --ranks 2,4    (braid and NCCL on device buffers)

Installs what is missing (apt-get), builds what it runs, repeats every sweep
--reps times interleaved (each library's run i sits next to the others' run
i, so load drifts hit all alike) and takes medians. Prints one table per
collective and rank count: busbw (GB/s) of each library, braid / best anchor,
and on the fabric braid / link (the link measured first with one TCP stream).
Writes results.csv, results.json and busbw-<collective>-<ranks>r.png to --out.
Every library checks its results; wrong results fail the sweep (exit 1).
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parse  # noqa: E402
import prepare  # noqa: E402
import results  # noqa: E402
import runners  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
COLLECTIVES = ("allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "gather", "scatter", "reduce")
# The default sweep: the collectives training spends its time in. Gather,
# scatter and reduce run when named (--collectives gather,scatter,reduce).
DEFAULT_COLLECTIVES = COLLECTIVES[:5]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="build directory (default: build)")
    ap.add_argument("--ranks", default="2,4", help="rank counts on loopback, e.g. 2,4 (fabric: hosts * ppn)")
    ap.add_argument("--collectives", default=",".join(DEFAULT_COLLECTIVES),
                    help=f"some of {','.join(COLLECTIVES)} (default: {','.join(DEFAULT_COLLECTIVES)})")
    ap.add_argument("--libraries", default=",".join(runners.DEFAULT_LIBRARIES),
                    help=f"some of {','.join(runners.LIBRARIES)} (nccl needs a GPU and --braid-memory device)")
    ap.add_argument("--sizes", default="8:32M", help="MIN:MAX bytes (K/M/G suffixes)")
    ap.add_argument("--factor", type=int, default=4, help="size multiplier between points")
    ap.add_argument("--iters", type=int, default=20, help="timed calls per size")
    ap.add_argument("--warmup", type=int, default=5, help="untimed calls per size")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of every sweep; medians are reported")
    ap.add_argument("--transport", choices=("tcp", "shm", "auto"),
                    help="loopback: tcp = every library over TCP on lo (the default); auto = each library's "
                         "own choice (shared memory on one host; gloo stays TCP); shm = braid and the MPIs "
                         "forced to shared memory. Sets BRAID_TRANSPORT for braid (unset with auto, the "
                         "default on the fabric: TCP across hosts, shared memory within one)")
    ap.add_argument("--braid-blocking", action="store_true",
                    help="run braid-perf with -z 1: every call inline on a NULL stream, blocking like the MPI "
                         "and Gloo calls it is compared with (default: braid-perf's own default, iterations "
                         "queued on a braid stream and synchronized once)")
    ap.add_argument("--braid-memory", choices=("host", "shareable", "device"), default="host",
                    help="braid-perf --memory: shareable takes braid's buffers from braidMemAlloc (peers on "
                         "the host read them with plain loads); device puts them on the GPU, as NCCL's are")
    ap.add_argument("--braid-cuda-stream", action="store_true",
                    help="braid-perf --cuda-stream: calls queued on a braid stream wrapping a cudaStream_t, "
                         "timed to cudaStreamSynchronize (needs --braid-memory device)")
    ap.add_argument("--fabric", metavar="hosts=H,rate=R[,ppn=P]",
                    help="run across an emulated cluster (tools/fabric, root) instead of loopback")
    ap.add_argument("--fabric-name", default="braidcmp")
    ap.add_argument("--out", help="directory for CSV, JSON and PNGs (default: BUILD/perf-compare)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds one library's sweep may take")
    ap.add_argument("--gloo-python", default="/usr/bin/python3", help="a python3 with Debian's torch")
    ap.add_argument("--nccl-python", default="python3", help="a python3 with a CUDA build of torch (nccl)")
    ap.add_argument("--no-install", action="store_true", help="do not apt-get missing packages")
    ap.add_argument("--no-build", action="store_true", help="do not configure/build")
    ap.add_argument("--jobs", type=int, default=2, help="ninja -j")
    args = ap.parse_args(argv)
    try:
        args.size_range = parse.parse_size_range(args.sizes)
        args.fabric_spec = parse.parse_fabric_spec(args.fabric) if args.fabric else None
        args.rank_list = [int(r) for r in args.ranks.split(",") if r]
    except ValueError as e:
        ap.error(str(e))
    args.coll_list = [c for c in args.collectives.split(",") if c]
    args.lib_list = [lib for lib in args.libraries.split(",") if lib]
    bad = [c for c in args.coll_list if c not in COLLECTIVES] + [x for x in args.lib_list if x not in runners.LIBRARIES]
    if bad:
        ap.error(f"unknown: {', '.join(bad)}")
    if args.factor < 2 or args.reps < 1 or args.iters < 1 or args.warmup < 0 or not args.rank_list:
        ap.error("need --factor >= 2, --reps >= 1, --iters >= 1, --warmup >= 0 and some --ranks")
    if args.braid_cuda_stream and (args.braid_memory != "device" or args.braid_blocking):
        ap.error("--braid-cuda-stream needs --braid-memory device and no --braid-blocking")
    if "braid" in args.lib_list:  # braid first: the ratio column is braid's
        args.lib_list.remove("braid")
        args.lib_list.insert(0, "braid")
    if args.fabric_spec:
        args.rank_list = [args.fabric_spec["hosts"] * args.fabric_spec["ppn"]]
    args.transport = args.transport or ("auto" if args.fabric_spec else "tcp")
    args.out = args.out or os.path.join(args.build, "perf-compare")
    return args


FOOTER = "# Avg bus bandwidth"
EXIT_GRACE_S = 20
HUNG_AT_EXIT = 125


def run(argv, env, timeout):
    """(exit status, stdout + stderr); 124 when it ran out of time, and
    HUNG_AT_EXIT when it printed its last row (the footer) but did not exit
    within EXIT_GRACE_S (MPICH 4.0 over UCX's tcp can spin in MPI_Finalize
    forever): it is killed then, its rows stand."""
    proc = subprocess.Popen(argv, env=dict(os.environ, **env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    lines, footer_at = [], []

    def read():
        for line in proc.stdout:
            lines.append(line)
            if FOOTER in line and not footer_at:
                footer_at.append(time.monotonic())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline, rc = time.monotonic() + timeout, None
    try:
        while rc is None:
            try:
                rc = proc.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                now = time.monotonic()
                if now > deadline or (footer_at and now > footer_at[0] + EXIT_GRACE_S):
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    rc = HUNG_AT_EXIT if footer_at else 124
                    lines.append(f"\n(killed: {'no exit after its last row' if footer_at else 'out of time'})\n")
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    reader.join(5)
    return rc, "".join(lines)


def tail(text, lines=6):
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])


def one(sweep, setup, args, lib, coll, ranks, flags, rep):
    series = sweep.get(ranks, coll, lib)
    if series.status:
        return  # unsupported, or failed in an earlier repetition
    argv, env = runners.command(lib, coll, ranks, flags, setup)
    t0 = time.monotonic()
    rc, out = run(argv, env, args.timeout + 30)
    # Every anchor's broadcast has one buffer: braid's in-place calls are the same operation.
    rows = parse.parse_rows(out, coll, ranks, in_place=lib == "braid" and coll == "broadcast")
    took = time.monotonic() - t0
    prepare.say(f"rep {rep}/{args.reps} {coll:<13} {ranks} ranks {lib:<8} {took:6.1f} s rc={rc}")
    if lib in ("gloo", "nccl", "nccl-braid", "torch-braid") and rc == runners.EXIT_UNSUPPORTED:
        why = re.search(r"(?:gloo|nccl)-perf: (.*)", out)
        sweep.add_status(ranks, coll, lib, results.UNSUPPORTED, why.group(1) if why else tail(out, 1))
    elif rows and rc in (0, 1, HUNG_AT_EXIT):  # 1: it ran and its rows count the wrong elements
        sweep.add_run(ranks, coll, lib, rows)
        if rc == HUNG_AT_EXIT:
            sweep.get(ranks, coll, lib).message = f"did not exit within {EXIT_GRACE_S} s of its last row; killed"
    else:
        sweep.add_status(ranks, coll, lib, results.FAILED, f"exit {rc}: {tail(out)}")
        prepare.say(f"  {' '.join(argv)}\n  {tail(out, 12)}")


def measure_link(setup):
    verbs = runners.fabric_verbs(setup)
    rc, out = run(verbs["up"], {}, 120)
    if rc != 0:
        sys.exit(f"compare: fabric up failed (exit {rc}): {out.strip()}")
    rc, out = run(verbs["measure"], {}, 60)
    gbits = parse.parse_link_gbits(out)
    if gbits is None:
        sys.exit(f"compare: fabric measure failed (exit {rc}): {out.strip()}")
    print(out.strip(), flush=True)
    return gbits


def write_outputs(sweep, out_dir, gloo_python):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "results.csv"), "w") as f:
        results.write_csv(sweep, f)
    json_path = os.path.join(out_dir, "results.json")
    with open(json_path, "w") as f:
        results.write_json(sweep, f)
    # Plots need matplotlib, which Debian installs for its own python3; a
    # machine without that python still gets its tables, CSV and JSON.
    try:
        rc, out = run([gloo_python, os.path.join(HERE, "plot.py"), json_path], {}, 300)
    except OSError as e:
        rc, out = 1, str(e)
    print(f"# wrote {out_dir}/results.csv, results.json" + ("" if rc == 0 else f"; plots failed: {tail(out)}"))
    for line in out.split() if rc == 0 else []:
        print(f"# wrote {line}")


def main(argv):
    args = parse_args(argv)
    setup = runners.Setup(args.build, HERE, transport=args.transport, fabric=args.fabric_spec,
                          fabric_name=args.fabric_name, gloo_python=args.gloo_python, timeout=args.timeout,
                          braid_blocking=args.braid_blocking, braid_memory=args.braid_memory,
                          braid_cuda_stream=args.braid_cuda_stream, nccl_python=args.nccl_python)
    if args.fabric_spec and not setup.root:
        sys.exit("compare: --fabric needs root (network namespaces, veth links, tc qdiscs)")
    if not args.no_install and not prepare.install(args.lib_list + ["plots"], REPO):
        sys.exit("compare: installing packages failed")
    if not args.no_build and not prepare.build(REPO, args.build, args.lib_list, args.fabric_spec, args.jobs):
        sys.exit("compare: build failed")
    # A SIGTERM unwinds like Ctrl-C, so that the fabric comes down.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    f = args.fabric_spec
    where = f"fabric {f['hosts']} hosts x {f['ppn']} at {f['rate']}" if f else f"loopback, transport {args.transport}"
    if args.braid_memory == "device":
        where += ", device buffers" + (" (braid on a CUDA stream)" if args.braid_cuda_stream else "")
    if args.braid_memory == "shareable":
        where += ", braid's buffers from braidMemAlloc"
    lo, hi = args.size_range
    meta = {"mode": "fabric" if f else "loopback", "where": where, "transport": args.transport, "reps": args.reps,
            "braid_blocking": args.braid_blocking, "braid_memory": args.braid_memory,
            "braid_cuda_stream": args.braid_cuda_stream, "sizes": [lo, hi], "factor": args.factor, "iters": args.iters,
            "warmup": args.warmup,
            "fabric": f, "link_gbytes": None, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "host_cpus": os.cpu_count(), "load_avg_start": os.getloadavg()[0]}
    sweep = results.Sweep(args.lib_list, meta)
    flags = runners.sweep_flags(lo, hi, args.factor, args.iters, args.warmup)
    try:
        if f:
            gbits = measure_link(setup)
            sweep.meta["link_gbytes"] = gbits / 8
        for rep in range(1, args.reps + 1):
            for ranks in args.rank_list:
                for coll in args.coll_list:
                    for lib in args.lib_list:
                        one(sweep, setup, args, lib, coll, ranks, flags, rep)
    finally:
        if f:
            run(runners.fabric_verbs(setup)["down"], {}, 120)
    sweep.meta["load_avg_end"] = os.getloadavg()[0]
    for ranks, coll in sweep.keys():
        print()
        print(results.render_table(sweep, ranks, coll))
    print()
    write_outputs(sweep, args.out, args.gloo_python)
    failed = sweep.failed()
    for msg in failed:
        print(f"compare: FAILED: {msg}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
