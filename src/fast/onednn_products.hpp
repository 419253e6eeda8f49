// Room — fast: the large products in oneDNN instead of OpenBLAS (model.products = onednn).
//
// The fast path splits each large product's rows over our threads and runs one single-threaded
// sgemm per block (fast/products.hpp, gemm_rows_parallel). Which sgemm is a choice of library:
// OpenBLAS (the default, and always the composed path's) or oneDNN's dnnl_sgemm (Debian's
// libdnnl-dev; found at build time, else this build refuses the setting). At the presets'
// shapes on this project's machine oneDNN was faster at 23 of 25 products, by up to a third,
// most on the weight gradients (docs/performance.md, "The products: OpenBLAS or oneDNN").
// Its sums run in its own order, so a run's numbers differ from openblas's in the last bits;
// the same setting, seed and threads give the same numbers, as always.
#pragma once

#include <string>

#include "fast/threading.hpp"

namespace rf {

// Whether this build links oneDNN.
bool onednn_built();
// "oneDNN 2.6.3 (cpu runtime OMP, ISA …)" or "not in this build" — for run logs and benches.
std::string onednn_description();
// The block product model.products = onednn installs (ops/gemm.hpp, FloatProduct);
// throws std::invalid_argument naming model.products when the build has no oneDNN.
FloatProduct onednn_product();

}  // namespace rf
