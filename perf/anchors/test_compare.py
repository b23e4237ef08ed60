"""Tests of the sweep driver's pure parts on recorded outputs:
  python3 -m unittest discover -s perf/anchors -p "test_*.py"
(ctest: anchors_compare_py). Standard library only."""
import io
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import parse  # noqa: E402
import prepare  # noqa: E402
import results  # noqa: E402
import runners  # noqa: E402
import torch_perf  # noqa: E402

# Recorded: braid-run -n 2 --quiet-ranks -- braid-perf allreduce -b 8 -e 1M -f 32 (rank prefix, two groups).
BRAID_OUT = """\
[0] # Collective allreduce nRanks 2 minBytes 8 maxBytes 1048576 step: 32(factor) warmup iters: 5 iters: 20
[0] #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
[0]            8             2     float     sum      -1    73.56    0.00    0.00      0    72.27    0.00    0.00      0
[0]          256            64     float     sum      -1     7.80    0.03    0.03      0     7.47    0.03    0.03      0
[0]       262144         65536     float     sum      -1    53.77    4.87    4.87      0    45.85    5.72    5.72      0
[0] # Out of bounds values : 0 OK
[0] # Avg bus bandwidth    : 1.57322
"""
# Recorded: mpirun.openmpi -np 2 mpi-perf-openmpi reducescatter -b 8 -e 1M -f 32 (one group, no prefix).
MPI_OUT = """\
# mpi-perf reducescatter, 2 ranks, float sum
#       size        count     type  redop   root       time    algbw    busbw #wrong
           8            1    float    sum      0       7.64    0.001    0.001      0
         256           32    float    sum      0       7.85    0.033    0.016      3
      262144        32768    float    sum      0     151.36    1.732    0.866      0
# Avg bus bandwidth    : 0.346201
"""
# braid-perf's alltoall has no in-place group; a size it skips shows N/A.
SKIPPED_OUT = """\
           0             0     float     sum      -1    30.10    0.00    0.00      0
           8             0     float    none      -1      N/A     N/A     N/A    N/A
          64             8     float    none      -1    12.50    0.01    0.00    N/A
"""
# nccl_perf.py's layout (torch_perf.header_lines / row_line, checked below to
# reproduce these lines): nccl-tests columns, then the CUDA events' time. The
# numbers are made up: no GPU where these tests run.
NCCL_OUT = """\
[0] # nccl-perf allreduce, 2 ranks, float sum, torch 2.11.0+cu130, NCCL 2.27.7, cuda:0 NVIDIA H100 80GB HBM3, \
NCCL_HOSTID braidhost<rank>, NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo NCCL_DEBUG=WARN
[0] #       size        count     type  redop   root       time    algbw    busbw #wrong     evtime
[0] #        (B)   (elements)                              (us)   (GB/s)   (GB/s)              (us)
[0]            8            2    float    sum      0     120.50    0.000    0.000      0     118.25
[0]      1048576       262144    float    sum      0     850.25    1.233    1.233      3     845.50
[0]    268435456     67108864    float    sum      0  190000.00    1.413    1.413      0  189500.00
"""
# braid-perf --memory device: the header and rank lines change, the rows do not.
BRAID_DEVICE_OUT = """\
[0] # Collective allreduce nRanks 2 minBytes 8 maxBytes 1048576 step: 32(factor) warmup iters: 5 iters: 20 \
validation: 1 blocking: 0 time: max algo: default memory: device stream: cuda
[0] #  Rank  0 Group  0 Pid   4242 on       gpu1 device cuda:0 NVIDIA H100 80GB HBM3
[0]       262144         65536     float     sum      -1    53.77    4.87    4.87      0    45.85    5.72    5.72      0
"""
# Recorded (excerpt): mpirun.openmpi -np 3 mpi-perf-openmpi gather -b 8 -e 1M -f 4 -n 5 -w 1. Sizes are
# the gathered whole, 3 blocks of count: 8 B has no element for each rank and is left out, 32 B is 2 a rank.
MPI_GATHER_OUT = """\
# mpi-perf gather, 3 ranks, float sum
#       size        count     type  redop   root       time    algbw    busbw #wrong
# warmed up: 1 calls at 43690 elements before the sweep
          24            2    float    sum      0       5.30    0.005    0.003      0
        8184          682    float    sum      0       8.58    0.954    0.636      0
      524280        43690    float    sum      0      55.86    9.386    6.257      0
# Avg bus bandwidth    : 1.36719
"""
# Recorded (excerpt): the same sweep of mpi-perf-openmpi scatter.
MPI_SCATTER_OUT = """\
# mpi-perf scatter, 3 ranks, float sum
          24            2    float    sum      0      13.67    0.002    0.001      0
      131064        10922    float    sum      0     134.97    0.971    0.647      0
      524280        43690    float    sum      0      76.86    6.821    4.547      0
"""
# Recorded (excerpt): braid-run -n 3 braid-perf gather -b 8 -e 1M -f 32 -n 5 -w 1, but for the last
# row's in-place #wrong, set to 5 here: the anchors have no in-place group to compare it with. A size
# with nothing to move prints 0.
BRAID_GATHER_OUT = """\
[0] #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
[0] #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
[0] # warmed up: 1 calls at 262140 bytes before the sweep
[0]            0             0     float    none       0     6.50    0.00    0.00      0     6.82    0.00    0.00      0
[0]          252            21     float    none       0     9.86    0.03    0.02      0     9.24    0.03    0.02      0
[0]       262140         21845     float    none       0    27.39    9.57    6.38      0    27.05    9.69    6.46      5
[0] # Out of bounds values : 0 OK
"""
FABRIC_OUT = "fabric braidcmp is up\nlink: 0.951 Gbit/s measured, 1gbit configured (host0 -> host1 over 1.76 s)\n"


class ParseTest(unittest.TestCase):
    def test_braid_rows_ignore_prefix_and_in_place_and_recompute_busbw(self):
        rows = parse.parse_rows(BRAID_OUT, "allreduce", 2)
        self.assertEqual(sorted(rows), [8, 256, 262144])
        self.assertEqual(rows[262144].time_us, 53.77)
        # 262144 B / 53.77 us = 4.875 GB/s algbw, factor 2*(2-1)/2 = 1.
        self.assertAlmostEqual(rows[262144].busbw, 262144 / 53.77 / 1e3)
        self.assertAlmostEqual(rows[256].busbw, 256 / 7.80 / 1e3)  # not the printed 0.03
        self.assertEqual(rows[8].wrong, 0)

    def test_in_place_reads_the_second_group(self):
        rows = parse.parse_rows(BRAID_OUT, "broadcast", 2, in_place=True)
        self.assertEqual(rows[262144].time_us, 45.85)
        self.assertAlmostEqual(rows[262144].busbw, 262144 / 45.85 / 1e3)  # broadcast's factor is 1
        self.assertEqual(rows[8].wrong, 0)
        self.assertEqual(parse.parse_rows(MPI_OUT, "broadcast", 2, in_place=True), {}, "one group: no rows")

    def test_mpi_rows_with_wrong_elements_and_factor(self):
        rows = parse.parse_rows(MPI_OUT, "reducescatter", 4)
        self.assertEqual(rows[256].wrong, 3)
        self.assertAlmostEqual(rows[262144].busbw, 262144 / 151.36 / 1e3 * 3 / 4)

    def test_skipped_sizes_and_unchecked_rows(self):
        rows = parse.parse_rows(SKIPPED_OUT, "alltoall", 8)
        self.assertEqual(list(rows), [64])
        self.assertIsNone(rows[64].wrong)

    def test_gather_and_scatter_rows_are_the_whole_with_allgathers_factor(self):
        rows = parse.parse_rows(MPI_GATHER_OUT, "gather", 3)
        self.assertEqual(sorted(rows), [24, 8184, 524280])
        # size = count * nranks * 4 B; busbw = algbw * (3-1)/3.
        self.assertAlmostEqual(rows[524280].busbw, 524280 / 55.86 / 1e3 * 2 / 3)
        self.assertEqual(rows[8184].wrong, 0)
        rows = parse.parse_rows(MPI_SCATTER_OUT, "scatter", 3)
        self.assertAlmostEqual(rows[131064].busbw, 131064 / 134.97 / 1e3 * 2 / 3)
        self.assertEqual(rows[24].time_us, 13.67)

    def test_braid_gather_rows_skip_empty_sizes_and_the_in_place_group(self):
        rows = parse.parse_rows(BRAID_GATHER_OUT, "gather", 3)
        self.assertEqual(sorted(rows), [252, 262140])
        self.assertEqual(rows[262140].time_us, 27.39)  # out of place, as the anchors
        self.assertEqual(rows[262140].wrong, 0)  # the in-place group's 5 is not the anchors' to compare
        self.assertAlmostEqual(rows[262140].busbw, 262140 / 27.39 / 1e3 * 2 / 3)

    def test_nccl_rows_ignore_the_event_time(self):
        rows = parse.parse_rows(NCCL_OUT, "allreduce", 2)
        self.assertEqual(sorted(rows), [8, 1 << 20, 256 << 20])
        self.assertEqual(rows[256 << 20].time_us, 190000.0)  # the host clock, not evtime
        self.assertAlmostEqual(rows[1 << 20].busbw, (1 << 20) / 850.25 / 1e3)
        self.assertEqual(rows[1 << 20].wrong, 3)
        rows = parse.parse_rows(BRAID_DEVICE_OUT, "allreduce", 2)
        self.assertEqual(list(rows), [262144])

    def test_torch_anchors_print_the_sample_layout(self):
        lines = [line[4:] for line in NCCL_OUT.splitlines()]
        title = lines[0][2:]
        self.assertEqual(torch_perf.header_lines(title, events=True), lines[:3])
        self.assertEqual(torch_perf.row_line(1 << 20, 1 << 18, 850.25, 1.0, 3, 845.5), lines[4])
        self.assertEqual(torch_perf.row_line(256 << 20, 64 << 20, 190000.0, 1.0, 0, 189500.0), lines[5])
        # gloo-perf: the same columns without evtime, as mpi-perf prints them.
        self.assertEqual(torch_perf.header_lines("gloo-perf", events=False)[1], MPI_OUT.splitlines()[1])
        gloo = torch_perf.row_line(262144, 65536, 151.36, 1.0, 0)
        self.assertEqual(parse.parse_rows(gloo, "allreduce", 2)[262144].time_us, 151.36)
        self.assertEqual(len(gloo.split()), 9)

    def test_the_torch_anchors_take_every_swept_collective(self):
        self.assertEqual(torch_perf.COLLECTIVES, compare.COLLECTIVES)
        for coll in ("gather", "scatter", "reduce"):
            self.assertEqual(torch_perf.parse_args([coll], "gloo", "").collective, coll)
            self.assertNotIn(coll, torch_perf.UNSUPPORTED["gloo"])

    def test_bus_factors_are_nccl_tests(self):
        self.assertEqual(parse.bus_factor("allreduce", 4), 1.5)
        for coll in ("allgather", "reducescatter", "alltoall", "gather", "scatter"):
            self.assertEqual(parse.bus_factor(coll, 4), 0.75)
        self.assertEqual(parse.bus_factor("broadcast", 4), 1.0)
        self.assertEqual(parse.bus_factor("reduce", 4), 1.0)

    def test_link_line(self):
        self.assertEqual(parse.parse_link_gbits(FABRIC_OUT), 0.951)
        self.assertEqual(parse.parse_link_gbits("[0] link: 1.5 Gbit/s measured, 2gbit configured"), 1.5)
        self.assertIsNone(parse.parse_link_gbits("fabric: needs root"))

    def test_sizes(self):
        self.assertEqual(parse.parse_size_range("8:32M"), (8, 32 << 20))
        self.assertEqual(parse.parse_size_range("64k"), (65536, 65536))
        self.assertEqual(parse.parse_size("1GiB"), 1 << 30)
        for bad in ("", "1M:8", "x", "1:2:3", "0:8"):
            with self.assertRaises(ValueError):
                parse.parse_size_range(bad)
        self.assertEqual([parse.format_size(n) for n in (8, 1024, 3 << 20, 1000)], ["8", "1K", "3M", "1000"])

    def test_fabric_spec(self):
        self.assertEqual(parse.parse_fabric_spec("hosts=4,rate=1gbit"), {"hosts": 4, "rate": "1gbit", "ppn": 1})
        self.assertEqual(parse.parse_fabric_spec("rate=200mbit,ppn=2")["ppn"], 2)
        for bad in ("hosts=1", "cores=2", "hosts"):
            with self.assertRaises(ValueError):
                parse.parse_fabric_spec(bad)


def row(size, busbw, wrong=0):
    return parse.Row(size, 1.0, busbw, wrong)


def sample_sweep(link=None):
    sweep = results.Sweep(["braid", "openmpi", "gloo"], {"where": "loopback", "reps": 3, "link_gbytes": link})
    for busbw in (2.0, 9.0, 3.0):  # median 3.0 whatever the order
        sweep.add_run(4, "allreduce", "braid", {1024: row(1024, busbw / 10), 1 << 20: row(1 << 20, busbw)})
    for busbw in (1.0, 1.5, 0.5):
        sweep.add_run(4, "allreduce", "openmpi", {1024: row(1024, 0.2), 1 << 20: row(1 << 20, busbw)})
    sweep.add_status(4, "allreduce", "gloo", results.UNSUPPORTED, "no reduce_scatter")
    return sweep


class ResultsTest(unittest.TestCase):
    def test_medians_and_ratio_to_best_anchor(self):
        lines = results.render_table(sample_sweep(), 4, "allreduce").splitlines()
        self.assertIn("median of 3", lines[0])
        self.assertIn("# gloo: n/s: no reduce_scatter", lines)
        big = [line for line in lines if line.split() and line.split()[0] == "1M"][0].split()
        self.assertEqual(big, ["1M", "3.000", "1.000", "n/s", "3.00x"])
        small = [line for line in lines if line.split() and line.split()[0] == "1K"][0].split()
        self.assertEqual(small, ["1K", "0.3", "0.2", "n/s", "1.50x"])

    def test_link_column(self):
        lines = results.render_table(sample_sweep(link=0.118), 4, "allreduce").splitlines()
        self.assertTrue(any(line.startswith("# link limit: 0.118 GB/s") for line in lines))
        big = [line for line in lines if line.split() and line.split()[0] == "1M"][0].split()
        self.assertEqual(big[-1], f"{3.0 / 0.118:.2f}")

    def test_wrong_results_show_and_fail(self):
        sweep = sample_sweep()
        sweep.add_run(4, "allreduce", "openmpi", {1 << 20: row(1 << 20, 5.0, wrong=7)})
        table = results.render_table(sweep, 4, "allreduce")
        self.assertIn("WRONG", table)
        self.assertEqual(sweep.failed(), [f"openmpi allreduce 4 ranks: wrong results at {1 << 20} B"])

    def test_failed_library_and_missing_sizes(self):
        sweep = sample_sweep()
        sweep.add_status(4, "allreduce", "openmpi", results.FAILED, "exit 124")
        sweep.add_run(4, "allreduce", "braid", {64: row(64, 0.01)})
        lines = results.render_table(sweep, 4, "allreduce").splitlines()
        self.assertEqual([line for line in lines if line.split()[0] == "64"][0].split(), ["64", "0.01", "fail", "n/s", "-"])
        self.assertEqual(sweep.failed(), ["openmpi allreduce 4 ranks: exit 124"])

    def test_csv_and_json(self):
        sweep = sample_sweep(link=0.1)
        sweep.meta.update(mode="fabric", transport="tcp")
        out = io.StringIO()
        results.write_csv(sweep, out)
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0], ",".join(results.CSV_FIELDS))
        self.assertIn("fabric,tcp,4,allreduce,braid,1048576,3.0,1.0,3,0.1,", lines)
        self.assertIn("fabric,tcp,4,allreduce,gloo,,,,0,0.1,n/s", lines)
        out = io.StringIO()
        results.write_json(sweep, out)
        data = json.loads(out.getvalue())
        braid = [r for r in data["results"] if r["library"] == "braid" and r["size"] == 1 << 20][0]
        self.assertEqual(braid["busbw_reps"], [2.0, 9.0, 3.0])
        self.assertEqual(data["libraries"], ["braid", "openmpi", "gloo"])


class RunnersTest(unittest.TestCase):
    FLAGS = runners.sweep_flags(8, 1 << 20, 4, 20, 5)

    def test_braid_blocking_runs_every_call_inline(self):
        setup = runners.Setup("/b", "/src/perf/anchors", transport="auto", root=True, braid_blocking=True)
        argv, env = runners.command("braid", "allreduce", 2, self.FLAGS, setup)
        self.assertEqual(argv[-2:], ["-z", "1"])
        self.assertEqual(env, {})
        argv, _ = runners.command("openmpi", "allreduce", 2, self.FLAGS, setup)
        self.assertNotIn("-z", argv)

    def test_loopback_tcp_pins_every_library_to_lo(self):
        setup = runners.Setup("/b", "/src/perf/anchors", transport="tcp", root=True)
        argv, env = runners.command("braid", "allreduce", 4, self.FLAGS, setup)
        self.assertEqual(argv[:3], ["/b/tools/braid-run/braid-run", "-n", "4"])
        self.assertIn("/b/perf/braid-perf/braid-perf", argv)
        self.assertEqual(env, {"BRAID_TRANSPORT": "tcp"})
        argv, _ = runners.command("openmpi", "alltoall", 4, self.FLAGS, setup)
        self.assertEqual(argv[0], "mpirun.openmpi")
        self.assertIn("--allow-run-as-root", argv)
        self.assertEqual(argv[argv.index("btl_tcp_if_include") + 1], "lo")
        self.assertEqual(argv[-len(self.FLAGS) - 2:-len(self.FLAGS)], ["/b/perf/anchors/mpi-perf-openmpi", "alltoall"])
        self.assertNotIn("-z", argv)
        argv, env = runners.command("mpich", "allgather", 2, self.FLAGS, setup)
        self.assertEqual(argv[:3], ["mpirun.mpich", "-np", "2"])
        self.assertEqual(env["MPIR_CVAR_NOLOCAL"], "1")
        self.assertEqual(env["UCX_NET_DEVICES"], "lo")
        argv, env = runners.command("gloo", "broadcast", 2, self.FLAGS, setup)
        self.assertEqual(argv[argv.index("--") + 1:argv.index("--") + 3],
                         ["/usr/bin/python3", "/src/perf/anchors/gloo_perf.py"])
        self.assertEqual(env, {"GLOO_SOCKET_IFNAME": "lo"})

    def test_openmpi_yields_when_ranks_outnumber_cpus(self):
        fabric = {"hosts": 4, "rate": "1gbit", "ppn": 1}
        argv, _ = runners.command("openmpi", "allreduce", 4, self.FLAGS,
                                  runners.Setup("/b", "/a", fabric=fabric, root=True, cpus=2))
        self.assertEqual(argv[argv.index("mpi_yield_when_idle") + 1], "1")
        argv, _ = runners.command("openmpi", "allreduce", 4, self.FLAGS,
                                  runners.Setup("/b", "/a", fabric=fabric, root=True, cpus=16))
        self.assertNotIn("mpi_yield_when_idle", argv)

    def test_auto_leaves_each_library_its_default(self):
        setup = runners.Setup("/b", "/a", transport="auto", root=False)
        _, env = runners.command("braid", "allreduce", 2, self.FLAGS, setup)
        self.assertEqual(env, {})
        argv, _ = runners.command("openmpi", "allreduce", 2, self.FLAGS, setup)
        self.assertNotIn("--mca", argv)
        self.assertNotIn("--allow-run-as-root", argv)
        _, env = runners.command("mpich", "allreduce", 2, self.FLAGS, setup)
        self.assertEqual(env, {})

    def test_fabric_runs_ranks_in_namespaces_over_fab0(self):
        setup = runners.Setup("/b", "/a", fabric={"hosts": 4, "rate": "1gbit", "ppn": 1}, fabric_name="cmp",
                              root=True)
        argv, _ = runners.command("braid", "allreduce", 4, self.FLAGS, setup)
        self.assertEqual(argv[:4], ["/b/tools/fabric/fabric", "run", "--name", "cmp"])
        self.assertEqual(argv[argv.index("--measure") + 1], "0")  # measured once, before the sweep
        hosts = "10.77.0.1,10.77.0.2,10.77.0.3,10.77.0.4"
        argv, env = runners.command("openmpi", "allreduce", 4, self.FLAGS, setup)
        self.assertEqual(argv[:5], ["ip", "netns", "exec", "cmp-host0", "mpirun.openmpi"])
        self.assertEqual(argv[argv.index("-H") + 1], hosts.replace(",", ":1,") + ":1")
        self.assertEqual(argv[argv.index("plm_rsh_agent") + 1], "/a/fabric_rsh.sh")
        self.assertEqual(argv[argv.index("btl_tcp_if_include") + 1], "fab0")
        self.assertEqual(argv[argv.index("oob_tcp_if_include") + 1], "fab0")
        self.assertEqual(env, {"BRAID_ANCHORS_FABRIC": "cmp"})
        self.assertEqual(argv[-len(self.FLAGS) - 2], "/b/perf/anchors/mpi-perf-openmpi")
        self.assertEqual(argv[argv.index("btl") + 1], "tcp,vader,self")
        setup.fabric["ppn"] = 2  # vader crashes with several ranks a namespace
        argv, _ = runners.command("openmpi", "allreduce", 8, self.FLAGS, setup)
        self.assertEqual(argv[argv.index("btl") + 1], "tcp,self")
        setup.fabric["ppn"] = 1
        argv, env = runners.command("mpich", "allreduce", 4, self.FLAGS, setup)
        self.assertEqual(argv[:5], ["ip", "netns", "exec", "cmp-host0", "mpirun.mpich"])
        self.assertEqual(argv[argv.index("-launcher-exec") + 1], "/a/fabric_rsh.sh")
        self.assertEqual(argv[argv.index("-hosts") + 1], hosts)
        self.assertEqual(env["UCX_NET_DEVICES"], "fab0")
        self.assertNotIn("MPIR_CVAR_NOLOCAL", env)  # hydra knows the hosts apart
        _, env = runners.command("gloo", "allreduce", 4, self.FLAGS, setup)
        self.assertEqual(env, {"GLOO_SOCKET_IFNAME": "fab0"})
        verbs = runners.fabric_verbs(setup)
        self.assertEqual(verbs["up"][1:], ["up", "--name", "cmp", "--hosts", "4", "--rate", "1gbit"])
        self.assertEqual(verbs["down"][1:], ["down", "--name", "cmp"])

    def test_nccl_splits_hosts_and_braid_uses_device_buffers(self):
        setup = runners.Setup("/b", "/src/perf/anchors", transport="tcp", root=True, braid_memory="device",
                              braid_cuda_stream=True, nccl_python="/opt/torch/.venv/bin/python3")
        argv, env = runners.command("nccl", "allreduce", 4, self.FLAGS, setup)
        self.assertEqual(argv[:3], ["/b/tools/braid-run/braid-run", "-n", "4"])
        program = argv[argv.index("--") + 1:]
        self.assertEqual(program[:3], ["/opt/torch/.venv/bin/python3", "/src/perf/anchors/nccl_perf.py", "allreduce"])
        self.assertEqual(program[3:3 + len(self.FLAGS)], self.FLAGS)
        self.assertEqual(program[-2:], ["--hostid-prefix", "braidhost"])
        self.assertEqual(env, {"NCCL_NET": "Socket", "NCCL_SOCKET_IFNAME": "lo", "NCCL_DEBUG": "WARN"})
        argv, env = runners.command("braid", "allreduce", 4, self.FLAGS, setup)
        self.assertEqual(argv[-3:], ["--memory", "device", "--cuda-stream"])
        self.assertEqual(env, {"BRAID_TRANSPORT": "tcp"})
        argv, _ = runners.command("braid", "allreduce", 4, self.FLAGS, runners.Setup("/b", "/a", root=True))
        self.assertNotIn("--memory", argv)

    def test_braid_memory_shareable_reaches_braid_perf_only(self):
        setup = runners.Setup("/b", "/src/perf/anchors", transport="auto", root=True, braid_memory="shareable")
        argv, _ = runners.command("braid", "alltoall", 2, self.FLAGS, setup)
        self.assertEqual(argv[-2:], ["--memory", "shareable"])
        argv, _ = runners.command("openmpi", "alltoall", 2, self.FLAGS, setup)
        self.assertNotIn("shareable", argv)

    def test_nccl_braid_is_nccl_over_the_plugin(self):
        setup = runners.Setup("/b", "/src/perf/anchors", transport="tcp", root=True, braid_memory="device",
                              nccl_python="/opt/torch/.venv/bin/python3")
        nccl_argv, _ = runners.command("nccl", "allreduce", 2, self.FLAGS, setup)
        argv, env = runners.command("nccl-braid", "allreduce", 2, self.FLAGS, setup)
        self.assertEqual(argv, nccl_argv)  # the same NCCL program, another network
        self.assertEqual(env["NCCL_NET_PLUGIN"], "braid")
        self.assertEqual(env["NCCL_NET"], "braid")
        self.assertEqual(env["BRAID_SOCKET_IFNAME"], "=lo")
        self.assertEqual(env["LD_LIBRARY_PATH"].split(":")[0], "/b/plugins/nccl-net")
        self.assertIn("nccl-net-braid", prepare.targets(["braid", "nccl-braid"], None))
        self.assertNotIn("nccl-net-braid", prepare.targets(["braid", "nccl"], None))

    def test_nccl_is_known_but_not_a_default(self):
        self.assertIn("nccl", runners.LIBRARIES)
        self.assertNotIn("nccl", runners.DEFAULT_LIBRARIES)
        self.assertIn("braid-run", prepare.targets(["braid", "nccl"], None))

    def test_unknown_library(self):
        with self.assertRaises(ValueError):
            runners.command("rccl", "allreduce", 2, self.FLAGS, runners.Setup("/b", "/a", root=True))


if __name__ == "__main__":
    unittest.main()
