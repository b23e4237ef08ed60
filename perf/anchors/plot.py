#!/usr/bin/python3
"""Plots of a sweep: busbw against size, one PNG per collective and rank
count, one line per library, log-scale size, the link limit as a line.
Reads the sweep's JSON, so a sweep can be re-plotted without re-running it:

  /usr/bin/python3 perf/anchors/plot.py build/perf-compare/results.json
Needs matplotlib (Debian: python3-matplotlib).
"""
import json
import os
import sys

STYLE = {"braid": ("tab:red", "o"), "openmpi": ("tab:blue", "s"), "mpich": ("tab:green", "^"),
         "gloo": ("tab:purple", "D"), "nccl": ("tab:olive", "v"), "nccl-braid": ("tab:orange", "P")}


def _size_label(n):
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g}{unit}"
    return str(n)


def plot(data, out_dir):
    """Writes the PNGs; returns their paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta = data["meta"]
    link = meta.get("link_gbytes")
    groups = {}
    for r in data["results"]:
        if r.get("size") and r.get("busbw_gbs") is not None and r.get("status") != "WRONG":
            groups.setdefault((r["collective"], r["ranks"]), {}).setdefault(r["library"], []).append(
                (r["size"], r["busbw_gbs"]))
    paths = []
    for (coll, ranks), libs in sorted(groups.items()):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for lib in data["libraries"]:
            if lib not in libs:
                continue
            pts = sorted(libs[lib])
            color, marker = STYLE.get(lib, (None, "x"))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=lib, color=color, marker=marker,
                    linewidth=2.2 if lib == "braid" else 1.4)
        if link:
            ax.axhline(link, color="black", linestyle="--", linewidth=1, label=f"link ({link * 8:.2f} Gbit/s)")
        ax.set_xscale("log", base=2)
        ticks = sorted({p[0] for pts in libs.values() for p in pts})
        ax.set_xticks(ticks)
        ax.set_xticklabels([_size_label(t) for t in ticks], rotation=45, fontsize=8)
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel("busbw (GB/s)")
        ax.set_title(f"{coll}, {ranks} ranks, {meta.get('where', '')} (median of {meta.get('reps', 1)})", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(out_dir, f"busbw-{coll}-{ranks}r.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        data = json.load(f)
    for path in plot(data, os.path.dirname(os.path.abspath(argv[0]))):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
