// Room — linear: the orthogonal random projection that FAVOR+ features use (Choromanski et
// al. 2020, §2.4). Not differentiable: a constant drawn once (or redrawn by the caller).
//
// Legend:  M random features (rows of W)   D head size (columns of W)
//          block   D consecutive rows of W, mutually orthogonal
//
// Each row of W must be marginally N(0, I_D), so that E[exp(w·x)] = exp(|x|²/2) keeps the
// FAVOR+ estimate of exp(q·k/√D) unbiased; orthogonality inside a block lowers its variance.
// A block: draw a D×D matrix of N(0, 1) entries, orthonormalise its rows by Gram–Schmidt (a
// uniformly random orthogonal matrix: each row is uniform on the sphere), then give row i the
// length of an independent D-dim standard Gaussian vector (chi distribution with D degrees of
// freedom) — direction uniform, length chi: exactly a Gaussian row. Computed in double.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "linear/linear_attention.hpp"
#include "ops/ops.hpp"

namespace rf {

// W:[M, D]: ⌈M/D⌉ orthogonal blocks, rows rescaled to chi-distributed norms, the last block
// truncated to its first M − D·⌊M/D⌋ rows. Draw order per block: D·D entries, then the norms.
Tensor orthogonal_random_features(size_t M, size_t D, Rng& rng) {
    if (D == 0)
        throw std::invalid_argument("orthogonal_random_features: D must be ≥ 1, got shape [" +
                                    std::to_string(M) + ", 0]");
    Array w = Array::from_shape({M, D});
    std::vector<double> Q(D * D);  // the block's orthonormal rows
    for (size_t start = 0; start < M; start += D) {
        const size_t rows = std::min(D, M - start);
        for (size_t i = 0; i < D; ++i) {
            double* qi = Q.data() + i * D;
            double norm = 0.0;
            do {  // a Gaussian row minus its projections on rows 0 … i−1, twice for accuracy
                for (size_t d = 0; d < D; ++d) qi[d] = rng.normal();
                for (int pass = 0; pass < 2; ++pass)
                    for (size_t k = 0; k < i; ++k) {
                        const double* qk = Q.data() + k * D;
                        double dot = 0.0;
                        for (size_t d = 0; d < D; ++d) dot += qi[d] * qk[d];
                        for (size_t d = 0; d < D; ++d) qi[d] -= dot * qk[d];
                    }
                norm = 0.0;
                for (size_t d = 0; d < D; ++d) norm += qi[d] * qi[d];
                norm = std::sqrt(norm);
            } while (norm < 1e-10);  // a (probability-0) dependent row: draw it again
            for (size_t d = 0; d < D; ++d) qi[d] /= norm;
        }
        for (size_t i = 0; i < rows; ++i) {
            double sq = 0.0;  // |g|², g ~ N(0, I_D): its root is chi(D)-distributed
            for (size_t d = 0; d < D; ++d) {
                const double g = rng.normal();
                sq += g * g;
            }
            const double length = std::sqrt(sq);
            for (size_t d = 0; d < D; ++d) w(start + i, d) = Real(length * Q[i * D + d]);
        }
    }
    return Tensor(std::move(w), false);
}

}  // namespace rf
