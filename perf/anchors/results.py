"""The sweep's results: repetitions collected per (ranks, collective, library),
medians, the side-by-side tables, CSV and JSON. Pure: no processes, no files
except through the writers' open streams.
"""
import csv
import json
import statistics

from parse import format_size

BRAID = "braid"
# braid itself through another library's API: shown beside the rest, but not an anchor.
BRAID_THROUGH = ("torch-braid",)

# What a cell shows when a library has no number for a size.
UNSUPPORTED, FAILED, WRONG, MISSING = "n/s", "fail", "WRONG", "-"


class Series:
    """Every repetition of one library's sweep of one collective at one rank
    count. status is "" while runs succeed, else UNSUPPORTED or FAILED with
    a message; a repetition with wrong elements marks its sizes WRONG."""

    def __init__(self):
        self.runs = []  # list of {size: parse.Row}
        self.status, self.message = "", ""

    def sizes(self):
        return sorted({s for run in self.runs for s in run})

    def wrong_at(self, size):
        return any(run[size].wrong for run in self.runs if size in run)

    def median(self, size, field="busbw"):
        values = [getattr(run[size], field) for run in self.runs if size in run]
        return statistics.median(values) if values else None

    def cell(self, size):
        """(number or None, text to show when there is no number)."""
        if self.status and not self.runs:
            return None, self.status
        if self.wrong_at(size):
            return None, WRONG
        value = self.median(size)
        return (value, "") if value is not None else (None, self.status or MISSING)


class Sweep:
    def __init__(self, libraries, meta):
        self.libraries = list(libraries)  # braid first, then the anchors
        self.meta = dict(meta)  # mode, transport, reps, sweep flags, link...
        self.series = {}  # (ranks, collective, library) -> Series

    def get(self, ranks, coll, lib):
        return self.series.setdefault((ranks, coll, lib), Series())

    def add_run(self, ranks, coll, lib, rows):
        self.get(ranks, coll, lib).runs.append(rows)

    def add_status(self, ranks, coll, lib, status, message):
        s = self.get(ranks, coll, lib)
        s.status, s.message = status, message

    def keys(self):
        """(ranks, collective) pairs in the order they were first measured."""
        seen = []
        for ranks, coll, _ in self.series:
            if (ranks, coll) not in seen:
                seen.append((ranks, coll))
        return seen

    def failed(self):
        """Messages of every failed or wrong series (for the exit status)."""
        out = []
        for (ranks, coll, lib), s in self.series.items():
            if s.status == FAILED:
                out.append(f"{lib} {coll} {ranks} ranks: {s.message}")
            out += [f"{lib} {coll} {ranks} ranks: wrong results at {size} B" for size in s.sizes() if s.wrong_at(size)]
        return out


def _fmt(value, text, width):
    """Three significant digits, so small sizes do not all read 0.000."""
    if value is None:
        return f"{text:>{width}}"
    return f"{value:>{width}.3f}" if value >= 1 else f"{value:>{width}.3g}"


def render_table(sweep, ranks, coll):
    """One collective at one rank count: size, busbw (GB/s) of each library,
    braid / best anchor, and braid / link where the link was measured."""
    libs = sweep.libraries
    anchors = [lib for lib in libs if lib != BRAID and lib not in BRAID_THROUGH]
    link = sweep.meta.get("link_gbytes")
    series = {lib: sweep.get(ranks, coll, lib) for lib in libs}
    sizes = sorted({s for lib in libs for s in series[lib].sizes()})
    w = max(9, *(len(lib) + 1 for lib in libs))
    reps = sweep.meta.get("reps", 1)
    lines = [f"## {coll}, {ranks} ranks, {sweep.meta.get('where', '')}, busbw in GB/s, median of {reps}"]
    if link:
        lines.append(f"# link limit: {link:.3f} GB/s ({link * 8:.3f} Gbit/s measured with one TCP stream)")
    for lib in libs:
        if series[lib].message:
            lines.append(f"# {lib}: " + ": ".join(filter(None, (series[lib].status, series[lib].message))))
    header = f"{'size':>8}" + "".join(f"{lib:>{w}}" for lib in libs) + f"{'vs best':>9}"
    lines.append(header + (f"{'vs link':>9}" if link else ""))
    for size in sizes:
        cells = {lib: series[lib].cell(size) for lib in libs}
        row = f"{format_size(size):>8}" + "".join(_fmt(*cells[lib], w) for lib in libs)
        ours = cells.get(BRAID, (None, ""))[0]
        best = max((cells[a][0] for a in anchors if cells[a][0] is not None), default=None)
        row += f"{ours / best:>8.2f}x" if ours is not None and best else f"{'-':>9}"
        if link:
            row += f"{ours / link:>9.2f}" if ours is not None else f"{'-':>9}"
        lines.append(row)
    return "\n".join(lines)


def records(sweep):
    """One flat record per (ranks, collective, library, size), medians plus
    every repetition, for CSV / JSON / plots."""
    out = []
    for (ranks, coll, lib), s in sweep.series.items():
        if not s.runs:
            out.append({"ranks": ranks, "collective": coll, "library": lib, "size": None, "status": s.status,
                        "message": s.message})
            continue
        for size in s.sizes():
            reps = [run[size] for run in s.runs if size in run]
            out.append({
                "ranks": ranks, "collective": coll, "library": lib, "size": size,
                "busbw_gbs": s.median(size), "time_us": s.median(size, "time_us"),
                "busbw_reps": [r.busbw for r in reps], "time_us_reps": [r.time_us for r in reps],
                "status": WRONG if s.wrong_at(size) else s.status, "message": s.message,
            })
    return out


CSV_FIELDS = ["mode", "transport", "ranks", "collective", "library", "size", "busbw_gbs", "time_us", "reps",
              "link_gbytes", "status"]


def write_csv(sweep, stream):
    w = csv.DictWriter(stream, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in records(sweep):
        w.writerow(dict(r, mode=sweep.meta.get("mode"), transport=sweep.meta.get("transport"),
                        reps=len(r.get("busbw_reps", [])), link_gbytes=sweep.meta.get("link_gbytes") or ""))


def write_json(sweep, stream):
    json.dump({"meta": sweep.meta, "libraries": sweep.libraries, "results": records(sweep)}, stream, indent=1)
    stream.write("\n")
