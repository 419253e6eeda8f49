#!/bin/sh
# The handout's one command: installs what grading needs, builds the lesson's code and every
# task's tests (build-student/), and grades every task once (the stubs fail: your start).
#
#   ./install.sh              all of it
#   ./install.sh --packages   the packages alone (the container's image: .devcontainer/)
#
# Debian or Ubuntu (WSL2's and a Chromebook's Linux too): apt-get, with sudo when not root.
# macOS: Homebrew. MSYS2 (Windows): pacman, UCRT64 packages. Elsewhere: install a C++17
# compiler, CMake ≥ 3.22, xtensor (with xtl and xsimd) and doctest yourself, then run
# ./install.sh again. POSIX sh: no bash needed.
set -eu
cd "$(dirname "$0")"
MODE=all
case "${1:-}" in
  "") ;;
  --packages) MODE=packages ;;
  *) echo "install: unknown argument '$1'; use no argument or --packages" >&2; exit 2 ;;
esac

# Debian/Ubuntu names: a compiler with its sanitizers (g++ brings libasan and libubsan), CMake,
# make, and the header-only libraries the lesson's code and tests include.
APT_PACKAGES="g++ cmake make libxtensor-dev xtl-dev libxsimd-dev doctest-dev"
# Homebrew names (xtensor brings xtl; Apple's clang has no OpenMP: the loops run on one thread).
# Not run on a Mac by the course's CI.
BREW_PACKAGES="cmake xtensor xsimd doctest"
# MSYS2's UCRT64 names (Windows without WSL). Not run by the course's CI either, which builds
# the lesson with MinGW-w64 on Linux and grades it under Wine.
PACMAN_PACKAGES="mingw-w64-ucrt-x86_64-gcc mingw-w64-ucrt-x86_64-cmake mingw-w64-ucrt-x86_64-make mingw-w64-ucrt-x86_64-xtensor mingw-w64-ucrt-x86_64-doctest"

if command -v apt-get > /dev/null && command -v dpkg-query > /dev/null; then
  missing=""
  for p in $APT_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "install: installing$missing"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086  # one word a package
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing > /dev/null
  fi
elif [ "$(uname -s)" = Darwin ]; then
  command -v brew > /dev/null || { echo "install: macOS needs Homebrew (https://brew.sh) for $BREW_PACKAGES" >&2; exit 1; }
  # shellcheck disable=SC2086
  brew install $BREW_PACKAGES
elif command -v pacman > /dev/null && [ -n "${MSYSTEM:-}" ]; then
  # shellcheck disable=SC2086
  pacman -S --needed --noconfirm $PACMAN_PACKAGES
else
  echo "install: no apt-get, Homebrew or MSYS2 here: install a C++17 compiler, CMake ≥ 3.22, xtensor and doctest, then run ./install.sh again"
fi
[ "$MODE" = packages ] && exit 0

scripts/grade.sh --build
echo
echo "install: built. Every task's stub fails its tests until you write it:"
scripts/grade.sh all || true
