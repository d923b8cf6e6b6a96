#!/usr/bin/env bash
# netns_bed.sh: a multi-host test bed on one machine, built from network namespaces.
#
# Each "host" is a network namespace with one interface (eth0) plugged by a
# veth pair into a bridge that lives in a namespace of its own (the switch),
# so nothing touches the machine's real network. Addresses are 10.A.B.H/24,
# with A.B taken from this script's pid (the switch namespace isolates runs
# anyway). Namespace names carry the pid too: parallel beds never collide.
# Braid tells the hosts apart by their network namespace (src/comm/host_identity.h),
# so ranks of different hosts talk over TCP through the switch; ranks of one host
# share its namespace.
#
# Usage (root; `ip netns` must be permitted):
#   netns_bed.sh run [--hosts 2,2] [--rate RATE] [--port P] -- PROGRAM ARGS...
#       Builds the bed, starts sum(hosts) ranks of PROGRAM (rank r on the host
#       the list assigns, hosts filled in order: --hosts 3,1,2 puts ranks 0-2 on
#       host 0, rank 3 on host 1, ranks 4-5 on host 2; --hosts 2x2 means 2,2)
#       with braidrun's variables (BRAID_RANK, BRAID_NRANKS, BRAID_ROOT,
#       BRAID_SECRET, BRAID_JOB_TAG), so braidCommInitFromEnv() joins them.
#       --rate limits each host's link to RATE in both directions with HTB
#       (tc rate syntax: 100mbit, 1gbit). Exits with the first failing rank's
#       status (the others are stopped), 0 when all succeed. Always removes
#       what it created, also on Ctrl-C or a failure.
#       Ranks also get BRAID_BED (the bed's name) and BRAID_BED_HOST (their host).
#   netns_bed.sh with [--hosts N] [--rate RATE] -- COMMAND ARGS...
#       Builds a bed of N hosts (default 2) and runs COMMAND here, in the calling
#       namespace, with BRAID_BED (host h is network namespace $BRAID_BED-h$h)
#       and BRAID_BED_NET (host h's address is $BRAID_BED_NET.$((h + 1))): for
#       launchers that start the ranks themselves, e.g.
#       braidrun --launcher 'ip netns exec {host}'. Exits with COMMAND's status;
#       always removes what it created.
#   netns_bed.sh link BED HOST down|up
#       Failure injection: cuts (or restores) host HOST's link at the switch,
#       e.g. from inside a rank: netns_bed.sh link "$BRAID_BED" 1 down
#       (the same as: ip -n "$BRAID_BED-sw" link set h1 down).
#   netns_bed.sh check
#       Exits 0 when a bed can be built here, 77 (ctest's skip code) when not.
set -euo pipefail

readonly kSkip=77

die() {
  echo "netns_bed: $*" >&2
  exit 2
}

can_build_bed() {
  [[ $(id -u) == 0 ]] || return 1
  command -v ip >/dev/null && command -v tc >/dev/null || return 1
  local probe="braidprobe$$"
  ip netns add "$probe" 2>/dev/null || return 1
  ip netns del "$probe" 2>/dev/null || true
}

# --- the bed -----------------------------------------------------------------------------------
BED="braid$$"
SWITCH="$BED-sw"
NET="10.$((($$ >> 8) & 255)).$(($$ & 255))"
HOSTS_MADE=0
RANK_PIDS=()

host_ns() { echo "$BED-h$1"; }

cleanup() {
  local pid
  for pid in "${RANK_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${RANK_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  local h
  for ((h = 0; h < HOSTS_MADE; ++h)); do ip netns del "$(host_ns "$h")" 2>/dev/null || true; done
  ip netns del "$SWITCH" 2>/dev/null || true
  rm -f /dev/shm/braid-"$BED"* 2>/dev/null || true  # segments of ranks that were killed
}

# HTB on one interface: everything leaving it shares RATE.
limit_egress() {
  local ns=$1 dev=$2 rate=$3
  ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: htb default 10
  ip netns exec "$ns" tc class add dev "$dev" parent 1: classid 1:10 htb rate "$rate" ceil "$rate"
}

build_bed() {
  local nhosts=$1 rate=$2 h ns
  ip netns add "$SWITCH"
  ip -n "$SWITCH" link add br0 type bridge
  ip -n "$SWITCH" link set br0 up
  ip -n "$SWITCH" link set lo up
  for ((h = 0; h < nhosts; ++h)); do
    ns=$(host_ns "$h")
    ip netns add "$ns"
    HOSTS_MADE=$((h + 1))
    # Created directly inside the namespaces: no name ever appears in the root namespace.
    ip link add eth0 netns "$ns" type veth peer name "h$h" netns "$SWITCH"
    ip -n "$SWITCH" link set "h$h" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$NET.$((h + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    if [[ -n $rate ]]; then
      limit_egress "$ns" eth0 "$rate"         # host -> switch
      limit_egress "$SWITCH" "h$h" "$rate"    # switch -> host
    fi
  done
}

# Host of every rank, from "3,1,2" or "2x2".
expand_hosts() {
  local spec=$1 counts=() h k
  if [[ $spec =~ ^([0-9]+)x([0-9]+)$ ]]; then
    for ((h = 0; h < BASH_REMATCH[1]; ++h)); do counts+=("${BASH_REMATCH[2]}"); done
  else
    IFS=, read -r -a counts <<<"$spec"
  fi
  ((${#counts[@]} >= 1 && ${#counts[@]} <= 16)) || die "--hosts $spec: give 1 to 16 hosts"
  for ((h = 0; h < ${#counts[@]}; ++h)); do
    [[ ${counts[h]} =~ ^[1-9][0-9]*$ ]] || die "--hosts $spec: host $h needs at least one rank"
    for ((k = 0; k < counts[h]; ++k)); do echo "$h"; done
  done
}

run_bed() {
  local hosts_spec=2,2 rate="" port=29500
  while (($#)); do
    case $1 in
      --hosts) hosts_spec=${2:?--hosts needs a value}; shift 2 ;;
      --rate) rate=${2:?--rate needs a value}; shift 2 ;;
      --port) port=${2:?--port needs a value}; shift 2 ;;
      --) shift; break ;;
      *) die "unknown option $1 (see the top of $0)" ;;
    esac
  done
  (($#)) || die "run: no program given after --"
  if ! can_build_bed; then
    echo "netns_bed: skipped: needs root and a permitted 'ip netns'" >&2
    exit $kSkip
  fi

  local host_of
  host_of=$(expand_hosts "$hosts_spec") || exit 2
  mapfile -t host_of <<<"$host_of"
  local nranks=${#host_of[@]} nhosts=$((host_of[-1] + 1))

  trap cleanup EXIT
  trap 'exit 130' INT TERM
  build_bed "$nhosts" "$rate"
  echo "netns_bed: $BED: $nhosts host(s) (ranks per host: $hosts_spec) on $NET.0/24" \
    "${rate:+, links limited to $rate}" >&2

  local secret r
  secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  for ((r = 0; r < nranks; ++r)); do
    ip netns exec "$(host_ns "${host_of[r]}")" env \
      BRAID_RANK="$r" BRAID_NRANKS="$nranks" BRAID_ROOT="$NET.1:$port" \
      BRAID_SECRET="$secret" BRAID_JOB_TAG="$BED" BRAID_BED="$BED" BRAID_BED_HOST="${host_of[r]}" \
      "$@" &
    RANK_PIDS+=($!)
  done

  # The first rank to fail decides the status; the others are stopped by cleanup.
  local status=0 pid rc
  while ((${#RANK_PIDS[@]})); do
    pid=""
    set +e
    wait -n -p pid "${RANK_PIDS[@]}"
    rc=$?
    if [[ -z $pid ]]; then
      # bash 5.2's `wait -n` can miss a job that ended while the shell was not
      # waiting (it answers 127 and names none); plain `wait PID` still has
      # its status, so take the ranks in order instead.
      pid=${RANK_PIDS[0]}
      wait "$pid"
      rc=$?
    fi
    set -e
    local alive=()
    for r in "${RANK_PIDS[@]}"; do [[ $r != "$pid" ]] && alive+=("$r"); done
    RANK_PIDS=("${alive[@]}")
    if ((rc != 0)); then
      echo "netns_bed: a rank exited with status $rc; stopping the others" >&2
      status=$rc
      break
    fi
  done
  exit "$status"
}

with_bed() {
  local nhosts=2 rate=""
  while (($#)); do
    case $1 in
      --hosts) nhosts=${2:?--hosts needs a value}; shift 2 ;;
      --rate) rate=${2:?--rate needs a value}; shift 2 ;;
      --) shift; break ;;
      *) die "unknown option $1 (see the top of $0)" ;;
    esac
  done
  (($#)) || die "with: no command given after --"
  [[ $nhosts =~ ^[1-9][0-9]?$ ]] && ((nhosts <= 16)) || die "with --hosts $nhosts: give 1 to 16"
  if ! can_build_bed; then
    echo "netns_bed: skipped: needs root and a permitted 'ip netns'" >&2
    exit $kSkip
  fi
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  build_bed "$nhosts" "$rate"
  local status=0
  BRAID_BED=$BED BRAID_BED_NET=$NET "$@" || status=$?
  exit "$status"
}

link_cmd() {
  (($# == 3)) || die "usage: $0 link BED HOST down|up"
  [[ $3 == down || $3 == up ]] || die "link: the state must be down or up, not $3"
  ip -n "$1-sw" link set "h$2" "$3"
}

case ${1:-} in
  run) shift; run_bed "$@" ;;
  with) shift; with_bed "$@" ;;
  link) shift; link_cmd "$@" ;;
  check) can_build_bed && exit 0 || exit $kSkip ;;
  *) die "usage: $0 run|with|link|check ... (see the top of this file)" ;;
esac
