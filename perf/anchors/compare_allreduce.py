#!/usr/bin/env python3
"""Side by side: braid-perf vs Open MPI (mpi-perf over its TCP BTL) for one
collective on this machine, R repetitions interleaved, medians reported.

  perf/anchors/compare_allreduce.py --build build --ranks 2 --reps 3

Prints size, braid's and Open MPI's median time and busbw, and the ratio of
busbw (braid / Open MPI). braid-perf checks every result (#wrong); a run with
wrong results aborts the comparison.
"""
import argparse
import re
import statistics
import subprocess
import sys
import time


def run(cmd):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stdout[-3000:]}")
    return out.stdout


def parse_braid(text):
    rows = {}
    for line in text.splitlines():
        line = re.sub(r"^\[\d+\]\s*", "", line)
        f = line.split()
        if len(f) >= 9 and f[0].isdigit():
            if f[8] != "0":
                sys.exit(f"braid-perf reported {f[8]} wrong elements at {f[0]} bytes")
            rows[int(f[0])] = (float(f[5]), float(f[7]))  # out-of-place time (us), busbw
    return rows


def parse_mpi(text):
    rows = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 9 and f[0].isdigit():
            if f[8] != "0":
                sys.exit(f"mpi-perf reported {f[8]} wrong elements at {f[0]} bytes")
            rows[int(f[0])] = (float(f[5]), float(f[7]))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--collective", default="allreduce")
    ap.add_argument("--sweep", default="-b 8 -e 64M -f 4 -n 40 -w 5")
    args = ap.parse_args()
    sweep = args.sweep.split()
    braid_cmd = [f"{args.build}/tools/braid-run/braid-run", "-n", str(args.ranks), "--quiet-ranks", "--",
                 f"{args.build}/perf/braid-perf/braid-perf", args.collective] + sweep
    mpi_cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(args.ranks), "--mca", "pml", "ob1",
               "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "lo",
               f"{args.build}/perf/anchors/mpi-perf", args.collective] + sweep
    braid_runs, mpi_runs = [], []
    for _ in range(args.reps):
        # Let the previous run's processes (mpirun's daemons) leave the CPUs first.
        time.sleep(2)
        braid_runs.append(parse_braid(run(braid_cmd)))
        time.sleep(2)
        mpi_runs.append(parse_mpi(run(mpi_cmd)))
    sizes = sorted(set(braid_runs[0]) & set(mpi_runs[0]))
    med = lambda runs, s, i: statistics.median(r[s][i] for r in runs)
    print(f"# {args.collective}, float sum, {args.ranks} ranks, loopback TCP, median of {args.reps} runs")
    print(f"# {'size(B)':>10} {'braid us':>10} {'ompi us':>10} {'braid busbw':>12} {'ompi busbw':>11} {'ratio':>6}")
    for s in sizes:
        bt, mt = med(braid_runs, s, 0), med(mpi_runs, s, 0)
        bb, mb = med(braid_runs, s, 1), med(mpi_runs, s, 1)
        ratio = f"{bb / mb:6.2f}" if mb > 0 else "   n/a"
        print(f"  {s:>10} {bt:>10.1f} {mt:>10.1f} {bb:>12.3f} {mb:>11.3f} {ratio}")


if __name__ == "__main__":
    main()
