#!/usr/bin/env bash
# Runs one command inside a Debian root made by scripts/torch_root.sh (PyTorch 2.x), with this
# repository and /tmp at the same paths as outside and the caller's working directory kept,
# so the same file names mean the same files on both sides of the chroot.
#
#   scripts/torch_chroot.sh ROOT COMMAND [ARGS…]
#       e.g. scripts/torch_chroot.sh /srv/trixie /usr/bin/python3 tests/bench/bench_torch.py --probe
#
# The mounts (/proc, the repository, /tmp; /dev bound for /dev/null and /dev/shm) live in a
# private mount namespace (unshare --mount): they are gone when the command ends, is killed or
# is interrupted — nothing stays mounted on the host, and the trap below ends the command on
# Ctrl-C. The environment is passed through (OMP_*, OPENBLAS_*, …); CPU affinity (taskset)
# is inherited. Needs root (chroot, mount). Exit status: the command's; 2 for a bad ROOT.
set -euo pipefail
fail() { echo "torch_chroot: $*" >&2; exit 2; }
[ $# -ge 2 ] || fail "usage: scripts/torch_chroot.sh ROOT COMMAND [ARGS…]"
root="$1"; shift
[ "$(id -u)" -eq 0 ] || fail "needs root (chroot, mount): run it with sudo"
[ -d "$root" ] || fail "no such directory: $root (make it with scripts/torch_root.sh $root)"
root="$(realpath "$root")"
[ -x "$root/bin/sh" ] && [ -d "$root/proc" ] && [ -d "$root/dev" ] ||
    fail "$root is not a Debian root (no bin/sh, proc or dev): make it with scripts/torch_root.sh $root"
# Its shell must run there, before anything is mounted or made in it: a root whose /bin/sh
# cannot start (another architecture, a missing loader) is refused in one line, left as it was.
chroot "$root" /bin/sh -c true > /dev/null 2>&1 ||
    fail "$root is not a working root: its /bin/sh does not run under chroot; make it again with scripts/torch_root.sh $root"
repo="$(cd "$(dirname "$0")/.." && pwd)"
here="$PWD"

# In the background, so that an interrupt of this script ends the command: killing unshare
# (--kill-child) kills the namespace's first process, and with it every process inside.
unshare --mount --pid --fork --kill-child bash -c '
  set -e
  root=$1 repo=$2 here=$3; shift 3
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mkdir -p "$root$repo" "$root/tmp"
  mount --bind "$repo" "$root$repo"
  mount --bind /tmp "$root/tmp"
  cd "$root"
  exec chroot "$root" /bin/sh -c '\''cd "$0" && exec "$@"'\'' "$here" "$@"
' torch-chroot "$root" "$repo" "$here" "$@" <&0 &
child=$!
trap 'kill -KILL "$child" 2> /dev/null' INT TERM HUP
rc=0
wait "$child" || rc=$?
while kill -0 "$child" 2> /dev/null; do wait "$child" || rc=$?; done
exit "$rc"
