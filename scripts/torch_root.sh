#!/usr/bin/env bash
# Makes a Debian 13 (trixie) root holding PyTorch 2.x, for scripts/bench.sh --torch-root:
# Debian 12, which builds ours, ships PyTorch 1.13 only; Debian 13's python3-torch is 2.6 and
# runs in a chroot on the same machine, so both sides can be measured on the same cores.
#
#   scripts/torch_root.sh DIR        e.g. scripts/torch_root.sh /srv/roots/trixie-torch
#
# DIR becomes the root itself (DIR/usr, DIR/etc, …). Once per DIR: the bare root (debootstrap
# --variant=minbase trixie, or the tarball scripts/fresh_root.sh caches in $RF_ROOT_CACHE,
# default /var/cache/roformer-roots/trixie-minbase.tar), then, with apt inside it,
#   python3-torch         PyTorch 2.6 (Debian's build: OpenBLAS for its products, oneDNN, OpenMP)
#   libopenblas0-pthread  without it torch gets the slow reference BLAS (libblas3)
#   libtorch-dev g++      the headers and the compiler torch.compile's C++ code needs
# (Debian's torch.compile makes scalar loops: Inductor's check of the CPU's vector ISA needs
# sleef.h, and with libsleef-dev it still fails to load — docs/performance.md, "PyTorch 2.6's
# modes".)
#   python3-numpy         what tests/bench/bench_torch.py imports besides torch
# A DIR that already holds them all and a torch that imports: one line, nothing changed. A
# DIR holding a root that lacks some: they are installed (nothing else is touched). Last, it
# prints the torch facts bench.sh quotes (version, BLAS, oneDNN, thread backend), read by
# tests/bench/bench_torch.py --probe inside the root.
#
# Needs root (debootstrap, chroot, mount) and Debian's mirror ($RF_DEBIAN_MIRROR, default
# http://deb.debian.org/debian) unless everything is there. About 1.5 GB in DIR. Commands
# inside the root run through scripts/torch_chroot.sh (private mounts: nothing stays mounted).
# Errors are one line naming what is wrong and how to fix it; apt's own output goes to
# DIR/var/log/torch_root.log.
set -euo pipefail
fail() { echo "torch_root: $*" >&2; exit 2; }
[ $# -eq 1 ] && [ -n "$1" ] && [[ "$1" != -* ]] || fail "usage: scripts/torch_root.sh DIR"
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot, mount): run it with sudo"
dir="$(realpath -m "$1")"
cd "$(dirname "$0")/.."
PACKAGES=(python3-torch libtorch-dev libopenblas0-pthread g++ python3-numpy)
MIRROR="${RF_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
TARBALL="${RF_ROOT_CACHE:-/var/cache/roformer-roots}/trixie-minbase.tar"
log="$dir/var/log/torch_root.log"
t0=$(date +%s)

inside() { scripts/torch_chroot.sh "$dir" "$@"; }
# Every package installed (dpkg's word) and torch importable: the root needs nothing.
ready() {
    [ -x "$dir/usr/bin/python3" ] || return 1
    local states
    states="$(chroot "$dir" dpkg-query -W -f='${db:Status-Status}\n' "${PACKAGES[@]}" 2> /dev/null)" ||
        return 1
    [ "$(grep -c '^installed$' <<< "$states")" -eq ${#PACKAGES[@]} ] || return 1
    facts="$(inside /usr/bin/python3 tests/bench/bench_torch.py --probe 2> /dev/null | head -n 1)" ||
        return 1
    [[ "$facts" == "bench_torch: torch="* ]] || return 1
    facts="${facts#bench_torch: }"
}

if ready; then
    echo "torch_root: $dir already holds a working torch ($facts); nothing to do"
    exit 0
fi

# The bare root.
if [ ! -e "$dir/bin/sh" ]; then
    [ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ] ||
        fail "$dir is neither empty nor a Debian root: give a new or empty directory"
    partial="$dir.partial.$$"
    trap 'rm -rf --one-file-system "$partial"' EXIT
    trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP
    mkdir -p "$partial"
    if [ -f "$TARBALL" ]; then
        echo "torch_root: unpacking the cached trixie root $TARBALL into $dir"
        tar -C "$partial" -xf "$TARBALL" || fail "could not unpack $TARBALL: delete it to debootstrap again"
    else
        command -v debootstrap > /dev/null || fail "debootstrap is missing: apt-get install debootstrap"
        echo "torch_root: debootstrap --variant=minbase trixie $dir (a few minutes; cached in $TARBALL)"
        debootstrap --variant=minbase trixie "$partial" "$MIRROR" > "$partial.log" 2>&1 ||
            fail "debootstrap trixie from $MIRROR failed (last line: $(tail -n 1 "$partial.log")); another mirror: RF_DEBIAN_MIRROR=…"
        rm -f "$partial.log"
        mkdir -p "$(dirname "$TARBALL")"
        tar -C "$partial" -cf "$TARBALL.tmp.$$" . && mv "$TARBALL.tmp.$$" "$TARBALL"
    fi
    rmdir "$dir" 2> /dev/null || true
    mv "$partial" "$dir"
    trap - EXIT
fi
[ -x "$dir/bin/sh" ] && [ -d "$dir/proc" ] ||
    fail "$dir exists but is not a Debian root (no bin/sh or proc): give a new or empty directory"
release="$(cat "$dir/etc/debian_version" 2> /dev/null || echo unknown)"
case "$release" in
    1[3-9]*|[2-9][0-9]*|*/sid) ;;
    *) fail "$dir is Debian $release, not 13 or newer: its python3-torch is not 2.x; give a new directory" ;;
esac

# The packages.
cp /etc/resolv.conf "$dir/etc/resolv.conf"
mkdir -p "$(dirname "$log")"
echo "torch_root: apt-get install ${PACKAGES[*]} in $dir (log: $log)"
apt_get() {
    inside /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get -y -q "$@" >> "$log" 2>&1 ||
        fail "apt-get $1 in $dir failed (last line: $(tail -n 1 "$log")); see $log"
}
apt_get update
apt_get install --no-install-recommends "${PACKAGES[@]}"
ready || fail "torch does not import in $dir after the install: run scripts/torch_chroot.sh $dir /usr/bin/python3 -c 'import torch' to see why"
echo "torch_root: $dir ready in $(( $(date +%s) - t0 )) s: $facts"
