"""Installing what the sweep needs from Debian and building what it runs.

Only missing packages are installed (dpkg-query first), so a second run costs
nothing; apt-get runs under sudo when we are not root.
"""
import os
import shutil
import subprocess
import sys

# braid's own build dependencies come from tools/scripts/install-deps.sh.
PACKAGES = {
    "openmpi": ["openmpi-bin", "libopenmpi-dev"],
    "mpich": ["mpich", "libmpich-dev"],
    "gloo": ["python3-torch"],
    "plots": ["python3-matplotlib"],
}


def say(msg):
    print(f"compare: {msg}", file=sys.stderr, flush=True)


def installed(package):
    out = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    return out.returncode == 0 and "install ok installed" in out.stdout


def install(groups, repo):
    """apt-get install the packages of `groups` that are missing; False on failure."""
    ok = subprocess.run([os.path.join(repo, "tools", "scripts", "install-deps.sh")]).returncode == 0
    missing = [p for g in groups for p in PACKAGES.get(g, []) if not installed(p)]
    if not missing:
        return ok
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    say("installing " + " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if subprocess.run(sudo + ["apt-get", "update", "-q"], env=env).returncode != 0:
        return False
    cmd = sudo + ["apt-get", "install", "-y", "-q", "--no-install-recommends"] + missing
    return subprocess.run(cmd, env=env).returncode == 0 and ok


def targets(libraries, fabric):
    out = ["braid-perf", "fabric" if fabric else "braid-run"]
    if any(lib in libraries for lib in ("gloo", "nccl", "nccl-braid")) and not fabric:
        out.append("braid-run")
    if "nccl-braid" in libraries:
        out.append("nccl-net-braid")
    out += [f"anchors-{lib}" for lib in ("openmpi", "mpich") if lib in libraries]
    return sorted(set(out))


def build(repo, build_dir, libraries, fabric, jobs):
    """Configure (again: it finds MPIs installed since) and build the targets
    the sweep runs. False on failure."""
    if shutil.which("ninja") is None or shutil.which("cmake") is None:
        say("cmake and ninja are needed (tools/scripts/install-deps.sh)")
        return False
    cfg = ["cmake", "-S", repo, "-B", build_dir, "-G", "Ninja"]
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        cfg.append("-DCMAKE_BUILD_TYPE=Release")
    if subprocess.run(cfg, stdout=subprocess.DEVNULL).returncode != 0:
        return False
    return subprocess.run(["ninja", "-C", build_dir, f"-j{jobs}"] + targets(libraries, fabric)).returncode == 0
