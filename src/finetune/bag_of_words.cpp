// Room — finetune: the bag-of-words floor (see bag_of_words.hpp).
#include "finetune/bag_of_words.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>

namespace rf {

BagOfWords::BagOfWords(size_t features, size_t num_classes)
    : features_(features), classes_(num_classes), w_((features + 1) * num_classes, 0.0) {
    if (num_classes < 2) throw std::invalid_argument("bag of words: needs at least 2 classes");
}

BagOfWords::Sparse BagOfWords::normalised(const std::vector<int>& x) const {
    std::map<size_t, double> counts;
    for (int j : x) {
        if (j < 0 || size_t(j) >= features_)
            throw std::invalid_argument("bag of words: feature " + std::to_string(j) +
                                        " outside 0.." + std::to_string(features_ - 1));
        counts[size_t(j)] += 1;
    }
    double norm = 0;
    for (const auto& [j, n] : counts) norm += n * n;
    norm = std::sqrt(norm);
    Sparse s;
    for (const auto& [j, n] : counts) {
        s.index.push_back(j);
        s.value.push_back(n / norm);
    }
    return s;
}

namespace {
// z = W·x + c for one normalised example; `p` holds W as [F, K] (a feature's K weights side by
// side, so a sparse example reads whole rows) then c: [K].
void sparse_logits(const std::vector<double>& p, size_t F, size_t K, const std::vector<size_t>& idx,
                   const std::vector<double>& val, std::vector<double>& z) {
    std::copy(p.begin() + std::ptrdiff_t(F * K), p.begin() + std::ptrdiff_t(F * K + K), z.begin());
    for (size_t t = 0; t < idx.size(); ++t) {
        const double* row = &p[idx[t] * K];
        for (size_t k = 0; k < K; ++k) z[k] += row[k] * val[t];
    }
}
}  // namespace

std::vector<double> BagOfWords::logits(const std::vector<int>& x) const {
    const Sparse s = normalised(x);
    std::vector<double> z(classes_);
    sparse_logits(w_, features_, classes_, s.index, s.value, z);
    return z;
}

int BagOfWords::predict(const std::vector<int>& x) const {
    const std::vector<double> z = logits(x);
    return int(std::max_element(z.begin(), z.end()) - z.begin());
}

// Mean loss f(θ) = (1/N) Σ_n CE(softmax(W·x_n + c), y_n) + (l2/2)‖W‖²; its gradient:
//   ∂f/∂W[k, j] = (1/N) Σ_n (p_nk − [y_n = k]) x_nj + l2·W[k, j],  ∂f/∂c_k = (1/N) Σ_n (p_nk − [y_n = k])
// Accelerated gradient descent with the diagonal step D⁻¹ (bag_of_words.hpp: ∇²f ≼ D):
//   y = θ_t + (t−1)/(t+2)·(θ_t − θ_{t−1});  θ_{t+1} = y − D⁻¹∇f(y)
// momentum reset (t = 1) when ∇f(y)·(θ_{t+1} − θ_t) > 0.
BagOfWordsFit BagOfWords::fit(const std::vector<std::vector<int>>& examples,
                              const std::vector<int>& labels, const BagOfWordsOptions& o) {
    if (examples.size() != labels.size() || examples.empty())
        throw std::invalid_argument("bag of words: no training examples (or labels ≠ examples)");
    const size_t N = examples.size(), K = classes_, F = features_;
    std::vector<Sparse> xs;
    xs.reserve(N);
    for (const std::vector<int>& x : examples) xs.push_back(normalised(x));
    for (int y : labels)
        if (y < 0 || size_t(y) >= K) throw std::invalid_argument("bag of words: label outside 0..K-1");
    // D per row of θ (a feature's K weights share one value; the last row is the bias):
    //   D_j = ½·(1/N) Σ_n x̃_nj ‖x̃_n‖₁ + l2,  x̃ = (x, 1)
    std::vector<double> curvature(F + 1, 0.0);
    for (const Sparse& x : xs) {
        double l1 = 1;
        for (double v : x.value) l1 += v;
        for (size_t t = 0; t < x.index.size(); ++t)
            curvature[x.index[t]] += 0.5 * x.value[t] * l1 / double(N);
        curvature[F] += 0.5 * l1 / double(N);
    }
    for (size_t j = 0; j < F; ++j) curvature[j] += o.l2;
    std::vector<double> theta(w_), previous(w_), y(w_.size()), grad(w_.size()), z(K);
    BagOfWordsFit fit;
    size_t momentum_t = 1;
    for (size_t it = 0; it < o.max_iterations; ++it) {
        const double beta = double(momentum_t - 1) / double(momentum_t + 2);
        for (size_t i = 0; i < y.size(); ++i) y[i] = theta[i] + beta * (theta[i] - previous[i]);
        // gradient (and loss) at y
        std::fill(grad.begin(), grad.end(), 0.0);
        double loss = 0;
        for (size_t n = 0; n < N; ++n) {
            const Sparse& x = xs[n];
            sparse_logits(y, F, K, x.index, x.value, z);
            const double m = *std::max_element(z.begin(), z.end());
            double total = 0;
            for (double& v : z) total += (v = std::exp(v - m));
            loss += std::log(total) - std::log(z[size_t(labels[n])]);
            double* bias = &grad[K * F];
            for (size_t k = 0; k < K; ++k)
                bias[k] += z[k] = (z[k] / total - (int(k) == labels[n] ? 1.0 : 0.0)) / double(N);
            for (size_t t = 0; t < x.index.size(); ++t) {
                double* row = &grad[x.index[t] * K];
                for (size_t k = 0; k < K; ++k) row[k] += z[k] * x.value[t];
            }
        }
        double norm2 = 0, decay = 0;
        for (size_t i = 0; i < K * F; ++i) {
            grad[i] += o.l2 * y[i];
            decay += y[i] * y[i];
        }
        for (double g : grad) norm2 += g * g;
        fit.loss = loss / double(N) + 0.5 * o.l2 * decay;
        fit.gradient_norm = std::sqrt(norm2);
        fit.iterations = it;
        if (fit.gradient_norm < o.tolerance) {  // y is (near) the minimum: keep it
            fit.converged = true;
            theta = y;
            break;
        }
        double uphill = 0;
        previous = theta;
        for (size_t i = 0; i < theta.size(); ++i) {
            theta[i] = y[i] - grad[i] / curvature[i / K];
            uphill += grad[i] * (theta[i] - previous[i]);
        }
        momentum_t = uphill > 0 ? 1 : momentum_t + 1;
        fit.iterations = it + 1;
    }
    w_ = theta;
    return fit;
}

}  // namespace rf
