"""Reading what the perf programs print. Pure functions over text, so that they
are tested on recorded outputs (test_compare.py).

braid-perf, mpi-perf, gloo-perf and nccl-perf all print nccl-tests rows:
  size count type redop root time algbw busbw #wrong [in-place group]
braid-perf's rows may carry a launcher prefix "[0] "; its second group (in
place) is ignored: every anchor measures out of place, but for broadcast,
whose anchors (MPI_Bcast, torch.distributed.broadcast) have one buffer: there
braid's in-place group is the same operation, and its out-of-place one adds
the root's copy into a second buffer (parse_rows(..., in_place=True)).
nccl-perf's extra column after #wrong (the CUDA events' time) is ignored the
same way.
`fabric measure` prints "link: 0.951 Gbit/s measured, 1gbit configured ...".
"""
import re

_PREFIX = re.compile(r"^\[\d+\]\s*")
_LINK = re.compile(r"^link:\s+([0-9.]+)\s+Gbit/s measured")


class Row:
    """One size of one run: out-of-place time (us), busbw (GB/s), wrong elements."""

    __slots__ = ("size", "time_us", "busbw", "wrong")

    def __init__(self, size, time_us, busbw, wrong):
        self.size, self.time_us, self.busbw, self.wrong = size, time_us, busbw, wrong

    def __eq__(self, other):
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __repr__(self):
        return f"Row({self.size}, {self.time_us}, {self.busbw}, {self.wrong})"


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def bus_factor(coll, nranks):
    """nccl-tests' busbw / algbw (PERFORMANCE.md)."""
    if coll == "allreduce":
        return 2.0 * (nranks - 1) / nranks
    if coll in ("allgather", "reducescatter", "alltoall", "gather", "scatter"):
        return (nranks - 1) / nranks
    return 1.0


def parse_rows(text, coll, nranks, in_place=False):
    """{size: Row} of every nccl-tests row in text. busbw is computed here from
    size and time (braid-perf prints it with two decimals, which flattens small
    sizes to 0.00). A row whose #wrong column is not a number (N/A:
    unchecked) counts as unchecked, wrong = None. in_place: read the second
    group (braid-perf's in-place calls) instead of the first."""
    factor = bus_factor(coll, nranks)
    first = 9 if in_place else 5  # the group's time column
    rows = {}
    for line in text.splitlines():
        fields = _PREFIX.sub("", line.strip()).split()
        if len(fields) < first + 4 or not fields[0].isdigit():
            continue
        size, time_us = int(fields[0]), _number(fields[first])
        if not size or not time_us:
            continue  # a skipped size ("N/A" cells), or nothing moved (size 0 at small -b)
        wrong = int(fields[first + 3]) if fields[first + 3].isdigit() else None
        rows[size] = Row(size, time_us, size / time_us / 1e3 * factor, wrong)
    return rows


def parse_link_gbits(text):
    """Measured link rate in Gbit/s from `fabric measure` / `fabric run`
    output, or None."""
    for line in text.splitlines():
        m = _LINK.match(_PREFIX.sub("", line.strip()))
        if m:
            return float(m.group(1))
    return None


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text):
    """'8', '64K', '32M', '1G' -> bytes (binary units, as braid-perf)."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(f"not a size: {text!r}")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def parse_size_range(text):
    """'8:32M' -> (8, 33554432); a single size means min = max."""
    parts = text.split(":")
    if len(parts) not in (1, 2):
        raise ValueError(f"expected MIN:MAX, got {text!r}")
    lo, hi = parse_size(parts[0]), parse_size(parts[-1])
    if lo < 1 or lo > hi:
        raise ValueError(f"empty size range {text!r}")
    return lo, hi


def parse_fabric_spec(text):
    """'hosts=4,rate=1gbit[,ppn=1]' -> {'hosts': 4, 'rate': '1gbit', 'ppn': 1}."""
    spec = {"hosts": 4, "rate": "1gbit", "ppn": 1}
    for item in filter(None, text.split(",")):
        key, sep, value = item.partition("=")
        if not sep or key not in spec:
            raise ValueError(f"--fabric: expected hosts=H,rate=R[,ppn=P], got {item!r}")
        spec[key] = value if key == "rate" else int(value)
    if spec["hosts"] < 2 or spec["ppn"] < 1:
        raise ValueError("--fabric: need hosts >= 2 and ppn >= 1")
    return spec


def format_size(n):
    """Bytes as the tables print them: 8, 1K, 32M."""
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)
