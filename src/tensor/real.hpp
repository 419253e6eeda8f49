// Stage 1 — tensor: the scalar type, alone (a header the per-ISA kernel files can include
// without the rest of the library: src/fast/simd_kernels.hpp).
//
// `Real` is float (float32) in the library everyone uses. The gradient-check tests link a
// second build of the same sources with RF_DOUBLE defined, where Real = double.
#pragma once

namespace rf {

#ifdef RF_DOUBLE
using Real = double;
#else
using Real = float;
#endif

}  // namespace rf
