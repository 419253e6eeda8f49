// Stage 2 — ops: which BLAS runs gemm() (blas_backend.hpp): RF_BLAS, read once.
#include "ops/blas_backend.hpp"

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace rf {

namespace {

constexpr int unresolved = -1;
std::atomic<int> chosen{unresolved};

BlasBackend from_environment() {
    const char* value = std::getenv("RF_BLAS");
    const std::string word = value ? value : "";
    if (word.empty() || word == "openblas") return BlasBackend::openblas;
    if (word == "blis") {
        if (!blis_linked())
            throw std::runtime_error(
                "RF_BLAS=blis, but this build has no BLIS: apt-get install libblis-dev "
                "(scripts/setup.sh does) and reconfigure, or unset RF_BLAS");
        return BlasBackend::blis;
    }
    throw std::runtime_error("RF_BLAS=" + word +
                             " is not a BLAS this program knows; use "
                             "openblas or blis, or unset it");
}

}  // namespace

const char* blas_backend_name(BlasBackend backend) {
    return backend == BlasBackend::blis ? "blis" : "openblas";
}

bool blas_backend_available(BlasBackend backend) {
    return backend == BlasBackend::openblas || blis_linked();
}

BlasBackend blas_backend() {
    int now = chosen.load(std::memory_order_relaxed);
    if (now == unresolved) {
        now = int(from_environment());
        chosen.store(now, std::memory_order_relaxed);
    }
    return BlasBackend(now);
}

void set_blas_backend(BlasBackend backend) {
    if (!blas_backend_available(backend))
        throw std::runtime_error(std::string("set_blas_backend: ") + blas_backend_name(backend) +
                                 " is not linked into this build (apt-get install libblis-dev, "
                                 "then reconfigure)");
    chosen.store(int(backend), std::memory_order_relaxed);
}

}  // namespace rf
