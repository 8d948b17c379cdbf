#!/usr/bin/env bash
# bench-create.sh: how fast `cargoship create` packs local files, next to
# `tar | zstd -T0` on the same bytes, and whether its memory stays flat as
# the package grows.
#
#   hack/bench-create.sh [SIZE_MIB ...]      (default: 256 1024)
#   REPEAT=3 TMPDIR=/dev/shm hack/bench-create.sh   (best of 3; tmpfs takes the disk out)
#
# For each size it writes SIZE MiB of incompressible-ish content (half
# random bytes, half base64 text of random bytes) as 8 files, builds a
# package from a definition listing them, then compresses a tar of the same
# files with zstd -T0 (default level 3, the level cargoship uses). Wall time
# and peak RSS come from /usr/bin/time -v; each tool runs REPEAT times,
# alternating, and the fastest run counts (a shared machine only ever makes
# a run slower). Needs: go, zstd, GNU time.
set -euo pipefail

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(256 1024)
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cargoship-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT

for tool in zstd /usr/bin/time go; do
    command -v "$tool" >/dev/null || { echo "bench-create: $tool is required" >&2; exit 1; }
done

go build -o "$work/cargoship" "$root/cmd/cargoship"

# measure LABEL CMD...: runs CMD under GNU time, prints "seconds rss_kib".
measure() {
    local log="$work/time.log"
    /usr/bin/time -v -o "$log" "$@" >/dev/null 2>"$work/stderr.log" || { cat "$work/stderr.log" >&2; exit 1; }
    local wall rss
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
    # h:mm:ss or m:ss.ss -> seconds
    echo "$(awk -v t="$wall" 'BEGIN{n=split(t,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}') $rss"
}

printf '%-8s %-10s %-12s %-12s %-9s %-13s %-13s %s\n' SIZE CREATE_S CREATE_MB/S ZSTD_T0_S RATIO CREATE_RSS ZSTD_RSS PACKAGE
for mib in "${sizes[@]}"; do
    dir="$work/def-$mib"
    mkdir -p "$dir/files"
    per=$((mib * 1024 * 1024 / 8))
    {
        echo "kind: ZarfDistro"
        echo "metadata: {name: bench, version: \"$mib\", architecture: amd64}"
        echo "spec:"
        echo "  type: k3s"
        echo "  version: 1.35.3-k3s1"
        echo "  config:"
        echo "    files:"
    } >"$dir/distro.yaml"
    for i in 0 1 2 3 4 5 6 7; do
        f="$dir/files/part$i.bin"
        if [ $((i % 2)) -eq 0 ]; then
            head -c "$per" /dev/urandom >"$f"
        else
            # head closes the pipe early on purpose; that is not a failure.
            (set +o pipefail; head -c $((per * 3 / 4 + 4)) /dev/urandom | base64 -w 76 | head -c "$per" >"$f")
        fi
        printf '      - source: files/part%d.bin\n        target: /opt/bench/part%d.bin\n' "$i" "$i" >>"$dir/distro.yaml"
    done
    sync

    c_s=""; z_s=""; c_rss=0; z_rss=0
    for _ in $(seq "${REPEAT:-1}"); do
        rm -rf "$work/out-$mib"
        read -r s rss < <(measure "$work/cargoship" create "$dir" -o "$work/out-$mib" \
            --cache-dir "$work/cache" --tmpdir "$work" --log-level error)
        c_s=$(awk -v a="$c_s" -v b="$s" 'BEGIN{print (a=="" || b<a) ? b : a}'); [ "$rss" -gt "$c_rss" ] && c_rss=$rss
        read -r s rss < <(measure sh -c "tar -cf - -C '$dir' files | zstd -T0 -q -c >'$work/zstd-$mib.tar.zst'")
        z_s=$(awk -v a="$z_s" -v b="$s" 'BEGIN{print (a=="" || b<a) ? b : a}'); [ "$rss" -gt "$z_rss" ] && z_rss=$rss
    done
    pkg=$(ls "$work/out-$mib"/*.tar.zst)

    awk -v m="$mib" -v c="$c_s" -v z="$z_s" -v cr="$c_rss" -v zr="$z_rss" -v p="$(stat -c %s "$pkg")" -v zp="$(stat -c %s "$work/zstd-$mib.tar.zst")" \
        'BEGIN{printf "%-8s %-10.2f %-12.1f %-12.2f %-9.2f %-13s %-13s %.1f MiB (zstd -T0: %.1f MiB)\n", m" MiB", c, m/c, z, c/z, int(cr/1024)" MiB", int(zr/1024)" MiB", p/1048576, zp/1048576}'
    rm -rf "$dir" "$work/out-$mib" "$work/zstd-$mib.tar.zst"
done
echo "cores: $(nproc), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg), runs per tool: ${REPEAT:-1} (fastest shown, RSS is the peak)"
echo "RATIO is create time / zstd -T0 time (1.00 = as fast as zstd alone)"
