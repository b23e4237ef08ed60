#!/bin/sh
# fabric_rsh.sh HOST command...
# The MPIs' remote-shell agent for an emulated cluster (`fabric up`): where
# they would ssh to HOST, this enters HOST's network namespace instead. HOST is
# a fabric address 10.77.0.<i+1> (tools/fabric/topology.h), the namespace
# $BRAID_ANCHORS_FABRIC-host<i>. The launcher (mpirun.openmpi's plm_rsh_agent,
# mpirun.mpich's -launcher-exec) itself runs in host 0's namespace, so its
# daemons reach it over the fabric and every rank gets a daemon, a loopback and
# a PMI server of its own host, as on real machines. Options an ssh agent would
# take (-x, -n, -o ...) are ignored. The command is one shell string, as ssh's.
set -eu
while [ $# -gt 0 ]; do
  case $1 in
    -o | -p | -l) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "usage: fabric_rsh.sh HOST command..." >&2; exit 2; }
: "${BRAID_ANCHORS_FABRIC:?set BRAID_ANCHORS_FABRIC to the fabric's name}"
host=$1
shift
case $host in
  10.77.0.*) i=$((${host#10.77.0.} - 1)) ;;
  *) echo "fabric_rsh.sh: $host is not a fabric host address (10.77.0.N)" >&2; exit 2 ;;
esac
exec ip netns exec "$BRAID_ANCHORS_FABRIC-host$i" sh -c "$*"
