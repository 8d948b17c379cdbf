# tiertime.sh is sourced by hack/test.sh: it runs tiers, alone or in
# parallel lanes, and times each one (wall, and the CPU its processes
# used), then prints one table. Each tier's row goes to build/tiers.tsv.
#
# CPU is user+sys of every process the tier started and waited for (a
# tier's go test, the test binaries, the builds they run). The fleets'
# hosts run in cgroups of their own and are not a tier's children, so they
# are counted only in the machine's line of the table.

# now is the wall clock in seconds with microseconds.
now() { echo "$EPOCHREALTIME"; }

# machine_cpu is the time every core of this machine spent busy since
# boot, in centiseconds (/proc/stat: user nice system irq softirq steal).
machine_cpu() {
  local _ user nice system idle iowait irq softirq steal
  read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
  echo $(((user + nice + system + irq + softirq + steal) * 100 / $(getconf CLK_TCK)))
}

# duration prints centiseconds as 12m34s.
duration() {
  local s=$(($1 / 100))
  printf '%dm%02ds' $((s / 60)) $((s % 60))
}

# secs_to_cs turns "12.345678" seconds into centiseconds.
secs_to_cs() {
  local whole=${1%.*} frac=${1#*.}
  frac=${frac}00
  echo $((10#$whole * 100 + 10#${frac:0:2}))
}

# run_tier TIER LANE: runs tier_TIER in a bash of its own and appends
# "tier lane result wall_cs cpu_cs" to build/tiers.tsv. A new bash, not a
# subshell: a subshell of a command tested with if or || ignores set -e,
# and a tier must stop at its first failing command. The tier functions
# are exported for it. Its output goes where run_tier's does.
run_tier() {
  local tier=$1 lane=$2 start
  start=$(now)
  (
    bash -euo pipefail -c "tier_${tier//-/_}" &
    rc=0
    wait $! || rc=$?
    # fields 16 and 17 of /proc/PID/stat: the CPU of every child waited for
    read -ra stat </proc/$BASHPID/stat
    cpu=$(((stat[15] + stat[16]) * 100 / $(getconf CLK_TCK)))
    result=pass
    if ((rc != 0)); then result=FAIL; fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$tier" "$lane" "$result" \
      $(($(secs_to_cs "$(now)") - $(secs_to_cs "$start"))) "$cpu" >>build/tiers.tsv
    exit "$rc"
  )
}

# run_serial TIER...: the tiers one after the other, output on this
# terminal; stops at the first that fails, as set -e did before.
run_serial() {
  : >build/tiers.tsv
  rm -f build/disk-least
  local start cpu0 t rc=0
  start=$(now)
  cpu0=$(machine_cpu)
  for t in "$@"; do
    run_tier "$t" serial || { rc=$?; break; }
  done
  print_table "$start" "$cpu0"
  return "$rc"
}

# disk_free prints the free space, in MiB, of the filesystem the checkout
# is on (build/, the fleets' hosts and the test binaries' temp files share
# it with the caches on a machine like CI's).
disk_free() { df -Pm . | awk 'NR == 2 { print $4 }'; }

# watch_disk FILE: every 20 s, the least free space seen so far into FILE,
# until killed. A run that fills the disk fails in odd places (a build's
# cache write, a host's overlay); the table then says so.
watch_disk() {
  local least free
  least=$(disk_free)
  echo "$least" >"$1"
  while sleep 20; do
    free=$(disk_free)
    if ((free < least)); then
      least=$free
      echo "$least" >"$1"
    fi
  done
}

# run_lanes "LANE: TIER..."...: every lane at once, each running its tiers
# one after the other (a lane goes on past a tier that failed, so one run
# shows every failure). A line says when each tier starts and ends; each
# tier's output is printed whole once every lane is done, in the order of
# $tiers.
run_lanes() {
  : >build/tiers.tsv
  local start cpu0 spec pids=() rc=0
  start=$(now)
  cpu0=$(machine_cpu)
  watch_disk build/disk-least &
  local watcher=$!
  for spec in "$@"; do
    (
      lane=${spec%%:*}
      failed=0
      for t in ${spec#*:}; do
        echo "[$(date -u +%H:%M:%S)] lane $lane: $t started"
        if run_tier "$t" "$lane" >"build/tier-$t.log" 2>&1; then
          echo "[$(date -u +%H:%M:%S)] lane $lane: $t passed"
        else
          failed=1
          echo "[$(date -u +%H:%M:%S)] lane $lane: $t FAILED (build/tier-$t.log)"
        fi
      done
      exit "$failed"
    ) &
    pids+=($!)
  done
  # Stopped (Ctrl-C, or CI's kill at its limit), stop every lane's tests
  # too: they share this process group, and a lane left running would go
  # on holding its fleet and the CPU. The fleets' hosts, in sessions of
  # their own, stay up for the next run of that fleet to replace.
  trap 'echo "hack/test.sh: stopped; stopping every lane" >&2; trap - INT TERM; kill -TERM 0; exit 143' INT TERM
  local pid
  for pid in "${pids[@]}"; do
    wait "$pid" || rc=1
  done
  kill "$watcher" 2>/dev/null || true
  local t
  for t in "${tiers[@]}"; do
    if [[ -f build/tier-$t.log ]]; then
      echo "======== tier $t (build/tier-$t.log)"
      cat "build/tier-$t.log"
    fi
  done
  # The end of a long run's output is what is read first: each failed
  # tier's last lines again, beside the table.
  local tier _
  while IFS=$'\t' read -r tier _ result _; do
    if [[ $result != pass ]]; then
      echo "======== tier $tier FAILED; the last lines of build/tier-$tier.log:"
      { grep -v 'handler.go' "build/tier-$tier.log" || true; } | tail -25
    fi
  done <build/tiers.tsv
  print_table "$start" "$cpu0"
  return "$rc"
}

# print_table START CPU0: build/tiers.tsv as a table, then the run's wall
# time and the CPU the whole machine used meanwhile (both cores: up to
# twice the wall time).
print_table() {
  local start=$1 cpu0=$2 wall cpu
  wall=$(($(secs_to_cs "$(now)") - $(secs_to_cs "$start")))
  cpu=$(($(machine_cpu) - cpu0))
  echo
  printf '%-12s %-11s %-6s %9s %9s\n' tier lane result wall cpu
  local tier lane result w c sum=0 failed=0
  while IFS=$'\t' read -r tier lane result w c; do
    printf '%-12s %-11s %-6s %9s %9s\n' "$tier" "$lane" "$result" "$(duration "$w")" "$(duration "$c")"
    sum=$((sum + c))
    if [[ $result != pass ]]; then failed=$((failed + 1)); fi
  done <build/tiers.tsv
  printf '%-12s %-11s %-6s %9s %9s\n' "tiers" "" "" "" "$(duration "$sum")"
  printf '%-12s %-11s %-6s %9s %9s\n' "total" "" "$( ((failed)) && echo "FAIL" || echo pass)" "$(duration "$wall")" "$(duration "$cpu")"
  echo "(cpu: user+sys of each tier's own processes; the total's is the whole machine's, fleet hosts included, out of $(duration $((wall * $(nproc)))) on $(nproc) cores)"
  if [[ -f build/disk-least ]]; then
    echo "(disk: $(disk_free) MiB free at the end, $(cat build/disk-least) MiB at the least during the run)"
  fi
}
