#!/usr/bin/env bash
# scripts/test.sh --arm64: the cross build for 64-bit ARM Linux, run under emulation
# (docs/testing.md, "arm64 under emulation"). On a Debian x86-64 machine, as root (CI runs it in
# a bare root: scripts/fresh_root.sh trixie -- 'scripts/test.sh --arm64'):
#   1. installs Debian's cross compiler (g++-aarch64-linux-gnu), qemu-user, and the arm64 builds
#      of the libraries scripts/setup.sh's main set links, beside the host's (multiarch:
#      dpkg --add-architecture arm64);
#   2. configures build-arm64/ with cmake/aarch64-linux-gnu.cmake and builds `roformer` and
#      `test_lesson` for aarch64;
#   3. under qemu-aarch64, emulating one CPU, a Cortex-A72 (the Raspberry Pi 4's; NEON, no SVE):
#      the lesson tests, a 20-step classroom run and fill-mask on it, and an x86-only model.isa
#      refused.
# Each step prints its seconds, and the last line the whole stage's. qemu computes every float
# in software, ≈ 50 times slower than the machine itself, hence the two cuts below.
#   RF_ARM64_CPU=max (any qemu -cpu name) emulates another CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
step() { echo "arm64: $1 in $(($(date +%s) - $2)) s"; }
fail() { echo "arm64: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "test --arm64: needs root (dpkg --add-architecture, apt-get); run it as root or in scripts/fresh_root.sh trixie" >&2; exit 2; }
command -v dpkg >/dev/null && [ "$(dpkg --print-architecture)" = amd64 ] ||
  { echo "test --arm64: cross-builds from Debian on x86-64 (amd64) only; on an arm64 machine run scripts/test.sh --lesson" >&2; exit 2; }

# scripts/setup.sh's main set, read from there (one list), each name mapped to what a cross
# build needs: the build tools and the header-only libraries (their headers and CMake files
# are the same for every CPU) are the host's; g++ becomes the cross compiler; oneDNN is left
# out (optional: model.products = auto runs OpenBLAS); every other library is its arm64 build.
eval "$(sed -n '/^MAIN_PACKAGES=(/,/)/p' scripts/setup.sh)"
[ "${#MAIN_PACKAGES[@]}" -gt 0 ] || fail "no MAIN_PACKAGES list in scripts/setup.sh"
HOST=" cmake make pkg-config libxtensor-dev xtl-dev libxsimd-dev libcli11-dev nlohmann-json3-dev "
packages=(g++-aarch64-linux-gnu qemu-user file doctest-dev)
for p in "${MAIN_PACKAGES[@]}"; do
  case "$p" in
    g++ | libdnnl-dev) ;;
    *) if [[ $HOST == *" $p "* ]]; then packages+=("$p"); else packages+=("$p:arm64"); fi ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "arm64: installing ${missing[*]}"
  dpkg --add-architecture arm64
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
step "packages" "$t0"

t=$(date +%s)
B=build-arm64
JOBS="${JOBS:-$(nproc)}"
mkdir -p "$B"
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  > "$B/configure.log" 2>&1 || { cat "$B/configure.log"; exit 1; }
grep -E "^-- (oneDNN|MPI|doctest)" "$B/configure.log" | sed 's/^-- /arm64: /' || true
cmake --build "$B" -j "$JOBS" --target roformer test_lesson
step "cross build (roformer, test_lesson)" "$t"

# The binaries are arm64's: `file` says so (an x86-64 one would run without qemu and prove
# nothing). qemu-aarch64 finds the arm64 loader and libraries where multiarch put them.
for bin in "$B/roformer" "$B/tests/test_lesson"; do
  kind=$(file -L "$bin")
  echo "$kind"
  [[ $kind == *"ARM aarch64"* ]] || fail "$bin is not an aarch64 program"
done
export QEMU_CPU="${RF_ARM64_CPU:-cortex-a72}"
# The library settings roformer otherwise restarts itself with (src/cli/main.cpp), given here:
# under qemu-user the restart fails (this kernel cannot start an arm64 program itself), and
# the run would go on with OpenBLAS's and libgomp's defaults.
export OMP_WAIT_POLICY=passive GOMP_SPINCOUNT=30000 OPENBLAS_NUM_THREADS=1
t=$(date +%s)
# Left out: the 8192-length search of the base bound test, a minute under qemu (8 s natively),
# as long as all the other lesson tests together; its function runs at length 1024 in the
# other base bound tests here.
qemu-aarch64 "$B/tests/test_lesson" --no-version \
  --test-case-exclude="base bound against Men et al. 2024*" | tee "$B/lesson.log"
step "lesson tests under qemu-aarch64 ($QEMU_CPU)" "$t"

t=$(date +%s)
RUN=$(mktemp -d "${TMPDIR:-/tmp}/arm64-demo.XXXXXX")
trap 'rm -rf "$RUN"' EXIT
# The classroom model, 20 steps of 8 sequences instead of 32 and one validation batch instead of
# the whole split: the full batch's 20 steps and evaluation take about 10 minutes under qemu.
qemu-aarch64 "$B/roformer" train --config configs/classroom.toml --set train.steps=20 \
  --set train.batch_size=8 --set train.eval_batches=1 --out "$RUN/run" 2>&1 | tee "$B/demo.log"
grep -q "neon kernels" "$B/demo.log" || fail "the run header does not name the NEON kernels"
qemu-aarch64 "$B/roformer" fill-mask --run "$RUN/run" \
  "In the beginning God created the [MASK] and the earth." | tee -a "$B/demo.log"
# An x86-only instruction set is refused in one line naming the key, exit 2 (bad input).
rc=0
qemu-aarch64 "$B/roformer" train --config configs/classroom.toml --set model.isa=avx2 \
  --out "$RUN/refused" 2> "$RUN/refused.err" >/dev/null || rc=$?
cat "$RUN/refused.err"
[ "$rc" = 2 ] && grep -q "model.isa = avx2: this CPU lacks it (it has neon)" "$RUN/refused.err" ||
  fail "model.isa = avx2 on arm64: expected exit 2 naming the key, got $rc"
step "20-step demo under qemu-aarch64" "$t"
step "the whole stage" "$t0"
