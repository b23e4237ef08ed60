"""The command line that runs one library's sweep of one collective, on
loopback or across the emulated fabric's namespaces. Pure: builds argv and
environment, runs nothing (test_compare.py checks them).

Loopback, --transport tcp: every library goes over TCP on lo
  braid    BRAID_TRANSPORT=tcp, braid-run
  openmpi  pml ob1, btl tcp,self, btl_tcp_if_include lo
  mpich    MPIR_CVAR_NOLOCAL=1 (no shared memory between local ranks),
           UCX_TLS=tcp,self on lo (Debian's MPICH is ch4:ucx)
  gloo     GLOO_SOCKET_IFNAME=lo (gloo has only TCP on CPUs)
  nccl     (GPU runs, never a default library) every rank its own NCCL_HOSTID,
           NCCL_NET=Socket, NCCL_SOCKET_IFNAME=lo: NCCL's Socket transport on
           lo, which is how NCCL takes two ranks on one GPU; braid then runs
           with --memory device (Setup.braid_memory)
  nccl-braid the same NCCL runs, over braid's NCCL net plugin instead of its
           Socket transport: NCCL_NET_PLUGIN=braid with the build's
           plugins/nccl-net on LD_LIBRARY_PATH, NCCL_NET=braid (NCCL fails
           rather than fall back to Socket when the plugin does not load),
           BRAID_SOCKET_IFNAME on the interface NCCL would have used
Loopback, --transport auto (or shm): each library's own choice on one host
(braid shm, Open MPI vader, MPICH its shm), gloo and nccl still TCP.
Fabric: every rank runs inside its host's namespace and talks over fab0:
  braid, gloo  `fabric run` (which places the ranks, sets RANK/MASTER_ADDR...)
  openmpi      mpirun.openmpi started in host 0's namespace with the hosts'
  mpich        addresses as its host list and fabric_rsh.sh as its ssh, so
               each host gets its own daemon and PMI server, as on real
               machines; TCP pinned to fab0, shared memory only between ranks
               of one host (ppn > 1), as braid does.
Open MPI yields the CPU while it waits (mpi_yield_when_idle) when there are
more ranks than CPUs, as it does itself when it knows it is oversubscribed.
"""
import os

# What perf-compare.sh runs unless told; nccl needs a GPU (gpu-compare.sh).
DEFAULT_LIBRARIES = ("braid", "openmpi", "mpich", "gloo")
LIBRARIES = DEFAULT_LIBRARIES + ("nccl", "nccl-braid", "torch-braid")
EXIT_UNSUPPORTED = 3  # torch_perf.py's "this collective is not in gloo"
HOST_IFNAME = "fab0"  # tools/fabric/topology.h
NCCL_HOSTID_PREFIX = "braidhost"  # rank r is NCCL host "braidhost<r>"


def host_address(i):
    return f"10.77.0.{i + 1}"  # tools/fabric/topology.h


class Setup:
    def __init__(self, build, anchors_dir, transport="tcp", fabric=None, fabric_name="braidcmp",
                 gloo_python="/usr/bin/python3", timeout=600, root=None, cpus=None, braid_blocking=False,
                 braid_memory="host", braid_cuda_stream=False, nccl_python="python3"):
        self.build, self.anchors_dir = build, anchors_dir
        # braid-perf -z 1: every call inline with a NULL stream, as blocking as
        # MPI_Allreduce; the default queues the iterations on a braid stream.
        self.braid_blocking = braid_blocking
        # braid-perf --memory device [--cuda-stream]: the buffers NCCL gets.
        self.braid_memory, self.braid_cuda_stream = braid_memory, braid_cuda_stream
        self.nccl_python = nccl_python  # a python3 with a CUDA build of torch
        self.transport = transport  # tcp | shm | auto
        self.fabric = fabric  # None (loopback) or {'hosts', 'rate', 'ppn'}
        self.fabric_name = fabric_name
        self.gloo_python = gloo_python
        self.timeout = timeout
        self.root = os.geteuid() == 0 if root is None else root
        self.cpus = cpus or os.cpu_count()

    def ifname(self):
        return HOST_IFNAME if self.fabric else "lo"

    def path(self, *parts):
        return os.path.join(self.build, *parts)


def sweep_flags(lo, hi, factor, iters, warmup):
    return ["-b", str(lo), "-e", str(hi), "-f", str(factor), "-n", str(iters), "-w", str(warmup)]


def _fabric_run(setup, program):
    f = setup.fabric
    return [setup.path("tools", "fabric", "fabric"), "run", "--name", setup.fabric_name, "--hosts", str(f["hosts"]),
            "--rate", f["rate"], "-P", str(f["ppn"]), "--measure", "0", "--timeout", str(setup.timeout),
            "--no-prefix", "--"] + program


def _braid_run(setup, ranks, program):
    return [setup.path("tools", "braid-run", "braid-run"), "-n", str(ranks), "--timeout", str(setup.timeout),
            "--quiet-ranks", "--"] + program


def _mpi_fabric(setup, flavor, ranks, program):
    """The MPI launched as on a cluster whose hosts are the namespaces."""
    f, agent = setup.fabric, os.path.join(setup.anchors_dir, "fabric_rsh.sh")
    hosts = [host_address(i) for i in range(f["hosts"])]
    env = {"BRAID_ANCHORS_FABRIC": setup.fabric_name}
    argv = ["ip", "netns", "exec", f"{setup.fabric_name}-host0"]
    if flavor == "openmpi":
        # With several ranks a namespace, Open MPI 4.1's vader btl segfaults
        # at the first collective ("client connect fail" from the tcp btl,
        # then signal 11 in rank 0; every rank's hostname is this machine's):
        # its ranks of one host then talk TCP over the host's own address,
        # which the kernel keeps on the namespace's loopback, off the link.
        btl = "tcp,vader,self" if f["ppn"] == 1 else "tcp,self"
        argv += ["mpirun.openmpi", "-np", str(ranks), "--bind-to", "none",
                 "-H", ",".join(f"{h}:{f['ppn']}" for h in hosts), "--mca", "plm_rsh_agent", agent,
                 "--mca", "pml", "ob1", "--mca", "btl", btl, "--mca", "btl_tcp_if_include", HOST_IFNAME,
                 "--mca", "oob_tcp_if_include", HOST_IFNAME]
        if setup.root:
            argv.append("--allow-run-as-root")
        if ranks > setup.cpus:
            argv += ["--mca", "mpi_yield_when_idle", "1"]
        return argv + program, env
    ucx = {"UCX_TLS": "tcp,self", "UCX_NET_DEVICES": HOST_IFNAME}
    argv += ["mpirun.mpich", "-launcher", "rsh", "-launcher-exec", agent, "-hosts", ",".join(hosts),
             "-ppn", str(f["ppn"]), "-np", str(ranks)]
    for key, value in ucx.items():
        argv += ["-genv", key, value]
    return argv + program, dict(env, **ucx)


def _mpi(setup, flavor, ranks, program):
    """mpirun.<flavor> argv and env for program (mpi-perf-<flavor> ...)."""
    if setup.fabric:
        return _mpi_fabric(setup, flavor, ranks, program)
    env, tcp = {}, setup.transport == "tcp"
    if flavor == "openmpi":
        argv = ["mpirun.openmpi", "-np", str(ranks), "--oversubscribe", "--bind-to", "none"]
        if setup.root:
            argv.append("--allow-run-as-root")
        if tcp:
            argv += ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "lo"]
        elif setup.transport == "shm":
            argv += ["--mca", "pml", "ob1", "--mca", "btl", "vader,self"]
        return argv + program, env
    argv = ["mpirun.mpich", "-np", str(ranks)]
    if tcp:
        env = {"MPIR_CVAR_NOLOCAL": "1", "UCX_TLS": "tcp,self", "UCX_NET_DEVICES": "lo"}
        for key, value in env.items():
            argv += ["-genv", key, value]
    return argv + program, env


def command(lib, coll, ranks, flags, setup):
    """(argv, extra environment) running `lib`'s sweep of `coll` on `ranks`
    ranks (on the fabric: hosts * ppn, which the caller passes)."""
    if lib == "braid":
        program = [setup.path("perf", "braid-perf", "braid-perf"), coll] + flags + ["-d", "float", "-o", "sum"]
        if setup.braid_blocking:
            program += ["-z", "1"]
        if setup.braid_memory != "host":
            program += ["--memory", setup.braid_memory] + (["--cuda-stream"] if setup.braid_cuda_stream else [])
        env = {"BRAID_TRANSPORT": setup.transport} if setup.transport in ("tcp", "shm") else {}
        if setup.fabric:
            return _fabric_run(setup, program), env
        return _braid_run(setup, ranks, program), env
    if lib in ("openmpi", "mpich"):
        return _mpi(setup, lib, ranks, [setup.path("perf", "anchors", f"mpi-perf-{lib}"), coll] + flags)
    if lib == "gloo":
        program = [setup.gloo_python, os.path.join(setup.anchors_dir, "gloo_perf.py"), coll] + flags
        env = {"GLOO_SOCKET_IFNAME": setup.ifname()}
        if setup.fabric:
            return _fabric_run(setup, program), env
        return _braid_run(setup, ranks, program), env
    if lib == "torch-braid":  # braid through torch.distributed: gloo's calls on braid
        program = [setup.gloo_python, os.path.join(setup.anchors_dir, "braid_torch_perf.py"), coll] + flags
        env = {"BRAID_LIBRARY": setup.path("libbraid.so")}
        if setup.transport in ("tcp", "shm"):
            env["BRAID_TRANSPORT"] = setup.transport
        if setup.fabric:
            return _fabric_run(setup, program), env
        return _braid_run(setup, ranks, program), env
    if lib in ("nccl", "nccl-braid"):
        program = [setup.nccl_python, os.path.join(setup.anchors_dir, "nccl_perf.py"), coll] + flags + [
            "--hostid-prefix", NCCL_HOSTID_PREFIX]
        if lib == "nccl":
            # Socket named outright: with an InfiniBand HCA present NCCL would take
            # it between its "hosts", and the comparison is with its TCP path.
            env = {"NCCL_NET": "Socket", "NCCL_SOCKET_IFNAME": setup.ifname(), "NCCL_DEBUG": "WARN"}
        else:
            plugin_dir = setup.path("plugins", "nccl-net")
            inherited = os.environ.get("LD_LIBRARY_PATH")
            env = {"NCCL_NET_PLUGIN": "braid", "NCCL_NET": "braid", "BRAID_SOCKET_IFNAME": "=" + setup.ifname(),
                   "LD_LIBRARY_PATH": plugin_dir + (":" + inherited if inherited else ""), "NCCL_DEBUG": "WARN"}
        if setup.fabric:
            return _fabric_run(setup, program), env
        return _braid_run(setup, ranks, program), env
    raise ValueError(f"unknown library {lib!r}; known: {', '.join(LIBRARIES)}")


def fabric_verbs(setup, seconds=2.0):
    """argv of `fabric up`, `fabric measure` and `fabric down` for the sweep's fabric."""
    fab, f = setup.path("tools", "fabric", "fabric"), setup.fabric
    name = ["--name", setup.fabric_name]
    return {
        "up": [fab, "up"] + name + ["--hosts", str(f["hosts"]), "--rate", f["rate"]],
        "measure": [fab, "measure"] + name + ["--seconds", str(seconds)],
        "down": [fab, "down"] + name,
    }
