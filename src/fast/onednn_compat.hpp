// Room — fast: where oneDNN's C++ API moved between Debian 12 (oneDNN 2.6) and Debian 13 (3.7), in
// one place. Include only where RF_HAVE_ONEDNN is defined (a build with libdnnl-dev).
//   matmul_descriptor(engine, a, b, c[, attr])  the matmul primitive's descriptor for
//                                        C = A·B (attr: post-ops such as C += …): made from an
//                                        operation descriptor (matmul::desc) up to 2.x; 3.0
//                                        removed those and takes the engine and the memory
//                                        descriptors directly
#pragma once

#include <dnnl.hpp>

namespace rf {

inline dnnl::matmul::primitive_desc matmul_descriptor(const dnnl::engine& engine,
                                                      const dnnl::memory::desc& a,
                                                      const dnnl::memory::desc& b,
                                                      const dnnl::memory::desc& c,
                                                      const dnnl::primitive_attr& attr = {}) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::matmul::primitive_desc(engine, a, b, c, attr);
#else
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, engine);
#endif
}

}  // namespace rf
