// Stage 1 — tensor: the xtensor headers, in one place, so the code builds against both header
// layouts: xtensor up to 0.25 (Debian 12: 0.24, Debian 13: 0.25) keeps them in xtensor/, from
// 0.26 on (Homebrew, Debian forky, Ubuntu 26.04: 0.27) they are in sub-folders of it. xtensor
// 0.27 also needs C++20: CMakeLists.txt and students/CMakeLists.txt choose the standard.
// (xsimd's own changes are in src/fast/xsimd_compat.hpp.)
#pragma once

#if __has_include(<xtensor/containers/xarray.hpp>)
#include <xtensor/containers/xarray.hpp>
#include <xtensor/core/xmath.hpp>
#include <xtensor/core/xnoalias.hpp>
#include <xtensor/generators/xbuilder.hpp>
#else
#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#endif
