# Cross build for 64-bit ARM Linux on a Debian x86-64 host (scripts/test.sh --arm64,
# docs/testing.md "arm64 under emulation"): Debian's cross compiler (g++-aarch64-linux-gnu) and
# the arm64 builds of the libraries, installed beside the host's by multiarch
# (dpkg --add-architecture arm64; libopenblas-dev:arm64 …), which puts them in
# /usr/lib/aarch64-linux-gnu and arm64-specific headers in /usr/include/aarch64-linux-gnu.
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Where find_* look: the cross compiler's own root, then the host's /usr, where the multiarch
# directory (CMAKE_LIBRARY_ARCHITECTURE, which CMake reads from the compiler: aarch64-linux-gnu)
# holds the arm64 libraries and the header-only packages' headers and CMake files sit. Programs
# (pkg-config, the code generators) are the host's.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config (libutf8proc) must read the arm64 .pc files, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
# Test programs run under qemu-user (`qemu-aarch64 PROGRAM` finds the arm64 loader in /lib).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# GCC's note on every file that includes xsimd, that GCC 10 changed how aarch64 passes some
# pairs in C++17, matters only when linking objects built by GCC 9 or older: not here.
set(CMAKE_CXX_FLAGS_INIT -Wno-psabi)
