#!/usr/bin/env bash
# The handout's one command: installs what grading needs, builds the lesson's code and every
# task's tests (build-student/), and grades every task once (the stubs fail: your start).
#
#   ./install.sh              all of it
#   ./install.sh --packages   the packages alone (the container's image: .devcontainer/)
#
# Debian or Ubuntu (WSL2's too): apt-get, with sudo when not root. macOS: Homebrew. Elsewhere:
# install a C++17 compiler, CMake ≥ 3.22, xtensor (with xtl and xsimd) and doctest yourself,
# then run ./install.sh again.
set -euo pipefail
cd "$(dirname "$0")"
MODE=all
case "${1:-}" in
  "") ;;
  --packages) MODE=packages ;;
  *) echo "install: unknown argument '$1'; use no argument or --packages" >&2; exit 2 ;;
esac

# Debian/Ubuntu names: a compiler with its sanitizers (g++ brings libasan and libubsan), CMake,
# make, and the header-only libraries the lesson's code and tests include.
APT_PACKAGES=(g++ cmake make libxtensor-dev xtl-dev libxsimd-dev doctest-dev)
# Homebrew names (xtensor brings xtl; coreutils gives the timeout the grader runs the tests
# under; Apple's clang has no OpenMP: the loops run on one thread). Not run on a Mac by the
# course's CI.
BREW_PACKAGES=(cmake xtensor xsimd doctest coreutils)

if command -v apt-get > /dev/null && command -v dpkg-query > /dev/null; then
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "install: installing ${missing[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
  fi
elif [ "$(uname -s)" = Darwin ]; then
  command -v brew > /dev/null || { echo "install: macOS needs Homebrew (https://brew.sh) for ${BREW_PACKAGES[*]}" >&2; exit 1; }
  brew install "${BREW_PACKAGES[@]}"
else
  echo "install: no apt-get or Homebrew here: install a C++17 compiler, CMake ≥ 3.22, xtensor and doctest, then run ./install.sh again"
fi
[ "$MODE" = packages ] && exit 0

scripts/grade.sh --build
echo
echo "install: built. Every task's stub fails its tests until you write it:"
scripts/grade.sh all || true
