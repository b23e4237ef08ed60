#!/bin/sh
# in_fabric_host.sh FABRIC RANKS_PER_HOST program args...
# Runs one MPI rank inside its host's network namespace of a `fabric up`
# cluster: rank r goes to FABRIC-host<r / RANKS_PER_HOST>. The rank comes from
# the launcher's environment (Open MPI: OMPI_COMM_WORLD_RANK, MPICH's hydra:
# PMI_RANK). `ip netns exec` execs the program, so the launcher still owns the
# process; its launch channel (unix sockets, inherited fds) does not need the
# network, and the collectives' TCP goes over the host's fab0 link.
set -eu
[ $# -ge 3 ] || { echo "usage: in_fabric_host.sh FABRIC RANKS_PER_HOST program args..." >&2; exit 2; }
fabric=$1 ppn=$2
shift 2
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}
[ -n "$rank" ] || { echo "in_fabric_host.sh: no OMPI_COMM_WORLD_RANK or PMI_RANK: start it under mpirun" >&2; exit 2; }
exec ip netns exec "$fabric-host$((rank / ppn))" "$@"
