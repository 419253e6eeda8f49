#!/usr/bin/env bash
# Runs a command in this repository on a bare Debian, as a new user's machine would be: a root
# made by `debootstrap --variant=minbase` (nothing installed but Debian's essential packages),
# the repository copied in (not the ignored build outputs), the command run there as root. What the command installs stays inside the root, which is deleted
# afterwards: every run starts from zero. Used by .ci/run to prove the README's two commands
# on Debian 12 and 13 (docs/testing.md, "From zero"). The repository arrives as a clone of
# HEAD plus the working tree's uncommitted changes, as a user who cloned and edited has it.
#
#   scripts/fresh_root.sh RELEASE [--keep DIR] [--repo DIR] -- COMMAND [ARGS…]
#
#   RELEASE     a Debian suite debootstrap knows: bookworm (Debian 12), trixie (Debian 13)
#   --keep DIR  make the root in DIR/root and keep it; a later call with the same DIR reuses it,
#               packages and build included (for working on a port; never for a proof)
#   --repo DIR  copy the git repository DIR instead of this one (a student's handout:
#               scripts/grade.sh --handout)
#   COMMAND     run with bash -c in the copied repository, e.g. 'scripts/demo.sh'
#
# The bare root (before anything is installed in it) is cached as a tarball under
# $RF_ROOT_CACHE (default /var/cache/roformer-roots); delete it to debootstrap again. Needs
# root (debootstrap, chroot, mounts) and Debian's mirror. /proc, /sys and /dev are mounted in a
# private mount namespace, so nothing stays mounted when the command ends or is killed. The
# host's CA bundle is copied in for npm (NPM_CONFIG_CAFILE): a network that re-signs https
# would otherwise be refused as a self-signed chain.
set -euo pipefail
usage="usage: scripts/fresh_root.sh RELEASE [--keep DIR] [--repo DIR] -- COMMAND [ARGS…]"
[ $# -ge 1 ] || { echo "fresh_root: $usage" >&2; exit 2; }
RELEASE=$1; shift
KEEP=""
REPO=$(cd "$(dirname "$0")/.." && pwd)
while [ "${1:-}" = --keep ] || [ "${1:-}" = --repo ]; do
  [ -n "${2:-}" ] || { echo "fresh_root: $1 needs a directory; $usage" >&2; exit 2; }
  if [ "$1" = --keep ]; then KEEP=$(realpath -m "$2")
  else
    git -C "$2" rev-parse --verify -q HEAD > /dev/null \
      || { echo "fresh_root: --repo $2 is not a git repository with a commit; $usage" >&2; exit 2; }
    REPO=$(cd "$2" && pwd)
  fi
  shift 2
done
[ "${1:-}" = -- ] && [ $# -ge 2 ] || { echo "fresh_root: $usage" >&2; exit 2; }
shift
COMMAND="$*"
case "$RELEASE" in *[!a-z]*|"") echo "fresh_root: '$RELEASE' is not a Debian suite name (bookworm, trixie)" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "fresh_root: needs root (debootstrap, chroot, mount); run it with sudo" >&2; exit 2; }
MIRROR="${RF_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CACHE="${RF_ROOT_CACHE:-/var/cache/roformer-roots}"
TARBALL="$CACHE/$RELEASE-minbase.tar"
t0=$(date +%s)

if ! command -v debootstrap >/dev/null; then
  echo "fresh_root: installing debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

if [ -n "$KEEP" ]; then
  WORK=$KEEP; mkdir -p "$WORK"
else
  WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/fresh-$RELEASE.XXXXXX")
  trap 'rm -rf --one-file-system "$WORK"' EXIT
fi
# An interrupt while the root is being made waits for the step under way, then exits (and
# the EXIT trap removes the root): nothing half-extracted is left behind or raced.
trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP
ROOT="$WORK/root"
if [ ! -x "$ROOT/bin/bash" ]; then
  if [ ! -f "$TARBALL" ]; then
    echo "fresh_root: debootstrap --variant=minbase $RELEASE (once; cached in $TARBALL)"
    rm -rf --one-file-system "$WORK/bootstrap"
    if ! debootstrap --variant=minbase "$RELEASE" "$WORK/bootstrap" "$MIRROR" > "$WORK/debootstrap.log" 2>&1; then
      # The log outlives the EXIT trap that removes $WORK: it is moved out first.
      log=$(mktemp "${TMPDIR:-/var/tmp}/fresh_root-$RELEASE-debootstrap.XXXXXX.log")
      mv "$WORK/debootstrap.log" "$log"
      tail -20 "$log"; echo "fresh_root: debootstrap $RELEASE failed (its log: $log)" >&2; exit 1
    fi
    mkdir -p "$CACHE"
    tar -C "$WORK/bootstrap" -cf "$TARBALL.tmp.$$" . && mv "$TARBALL.tmp.$$" "$TARBALL"
    rm -rf --one-file-system "$WORK/bootstrap"
  fi
  mkdir -p "$ROOT"
  tar -C "$ROOT" -xf "$TARBALL"
fi
t1=$(date +%s)

# The repository as a user's clone has it (HEAD, with its .git), then this working tree's
# uncommitted changes on top: modified and untracked files git does not ignore, deletions.
DEST=/work/roformer-cpp
if [ ! -d "$ROOT$DEST/.git" ]; then
  mkdir -p "$ROOT/work"
  git clone -q "$REPO" "$ROOT$DEST"
fi
git -C "$ROOT$DEST" fetch -q "$REPO" HEAD && git -C "$ROOT$DEST" checkout -q -f --detach FETCH_HEAD
(cd "$REPO" && { git diff -z --name-only --diff-filter=d HEAD; git ls-files -z -o --exclude-standard; } |
  tar --null -T - -cf -) | tar -C "$ROOT$DEST" -xf -
(cd "$REPO" && git diff -z --name-only --diff-filter=D HEAD) | (cd "$ROOT$DEST" && xargs -0 -r rm -f --)
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/host-ca-certificates.crt" 2>/dev/null || true

echo "fresh_root: Debian $RELEASE ($(cat "$ROOT/etc/debian_version")), bare root ready in $((t1 - t0)) s; running: $COMMAND"
set +e
# In the background, so that an interrupt of this script ends the command too: killing
# unshare (--kill-child) kills the namespace's first process, and with it every process inside.
unshare --mount --pid --fork --kill-child bash -c '
  set -e
  ROOT=$1; shift
  mount -t proc proc "$ROOT/proc"
  mount -t sysfs sysfs "$ROOT/sys" 2>/dev/null || mount --rbind /sys "$ROOT/sys"
  mount --rbind /dev "$ROOT/dev"
  exec chroot "$ROOT" "$@"
' fresh-root "$ROOT" env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  CI="${CI:-}" JOBS="${JOBS:-}" NPM_CONFIG_CAFILE=/etc/host-ca-certificates.crt \
  bash -c "cd $DEST && $COMMAND" <&0 &
child=$!
trap 'kill -KILL "$child" 2>/dev/null' INT TERM HUP  # unshare ignores TERM while it waits
rc=0
wait "$child" || rc=$?
while kill -0 "$child" 2>/dev/null; do wait "$child" || rc=$?; done
trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP
set -e
t2=$(date +%s)
echo "fresh_root: Debian $RELEASE: '$COMMAND' exited $rc after $((t2 - t1)) s"
exit $rc
