// Stage 3 — nn: AdamW update, gradient clipping and optimizer state for resuming.
// Raw loops over contiguous buffers; every formula is the one in adamw.hpp.
#include "nn/adamw.hpp"

#include <cmath>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace rf {

std::vector<NamedParameter> with_default_decay(const std::vector<Tensor>& params) {
    std::vector<NamedParameter> out;
    out.reserve(params.size());
    for (const Tensor& p : params) out.emplace_back(p);
    return out;
}

AdamW::AdamW(std::vector<NamedParameter> params, AdamWOptions options)
    : params_(std::move(params)), options_(options) {
    if (!(options_.beta1 >= 0 && options_.beta1 < 1) ||
        !(options_.beta2 >= 0 && options_.beta2 < 1))
        throw std::invalid_argument("AdamW: beta1 and beta2 must be in [0, 1), got " +
                                    std::to_string(options_.beta1) + " and " +
                                    std::to_string(options_.beta2));
    if (!(options_.eps > 0)) throw std::invalid_argument("AdamW: eps must be positive");
    std::unordered_set<std::string> seen;
    for (size_t i = 0; i < params_.size(); ++i) {
        const Tensor& p = params_[i].tensor;
        if (!p.defined())
            throw std::invalid_argument("AdamW: parameter " + std::to_string(i) +
                                        " is an undefined Tensor");
        names_.push_back(p.name().empty() ? "param." + std::to_string(i) : p.name());
        if (!seen.insert(names_.back()).second)
            throw std::invalid_argument("AdamW: two parameters are named '" + names_.back() +
                                        "'; names must be unique to save optimizer state");
        m_.emplace_back(p.numel(), Real(0));
        v_.emplace_back(p.numel(), Real(0));
    }
}

void AdamW::zero_grad() {
    for (NamedParameter& p : params_) p.tensor.zero_grad();
}

// ‖g‖ = √(Σ_params Σ_j g_j²), summed in double in a fixed order (deterministic)
double AdamW::grad_norm() const {
    double sum = 0.0;
    for (const NamedParameter& p : params_) {
        if (!p.tensor.has_grad()) continue;
        const Real* g = p.tensor.impl()->grad.data();
        const size_t n = p.tensor.numel();
        for (size_t j = 0; j < n; ++j) sum += static_cast<double>(g[j]) * g[j];
    }
    return std::sqrt(sum);
}

// g ← g · max_norm / ‖g‖   when ‖g‖ > max_norm
double AdamW::clip_grad_norm(double max_norm) {
    const double norm = grad_norm();
    if (!(max_norm > 0) || !std::isfinite(norm) || norm <= max_norm) return norm;
    const double scale = max_norm / norm;
    for (NamedParameter& p : params_) {
        if (!p.tensor.has_grad()) continue;
        Real* g = p.tensor.grad().data();
        const size_t n = p.tensor.numel();
        for (size_t j = 0; j < n; ++j) g[j] = static_cast<Real>(g[j] * scale);
    }
    return norm;
}

// One update (derivation: docs/backward.md):
// w ← w(1 − lr·wd);  m ← β1 m + (1−β1) g;  v ← β2 v + (1−β2) g²;  w ← w − lr·m̂/(√v̂ + ε)
// (w: a weight, `theta` below)
// graded:begin adamw_step (students/tasks/adamw_step.cpp)
void AdamW::step(double lr) {
    ++step_;
    const double b1 = options_.beta1, b2 = options_.beta2, eps = options_.eps;
    const double correction1 = 1.0 - std::pow(b1, static_cast<double>(step_));
    const double correction2 = 1.0 - std::pow(b2, static_cast<double>(step_));
    for (size_t i = 0; i < params_.size(); ++i) {
        Tensor& p = params_[i].tensor;
        if (!p.has_grad()) continue;
        const double shrink = params_[i].decay ? 1.0 - lr * options_.weight_decay : 1.0;
        Real* theta = p.data();
        const Real* g = p.grad().data();
        Real* m = m_[i].data();
        Real* v = v_[i].data();
        const long n = static_cast<long>(p.numel());
        for (long j = 0; j < n; ++j) {
            const double gj = g[j];
            const double mj = b1 * m[j] + (1.0 - b1) * gj;
            const double vj = b2 * v[j] + (1.0 - b2) * gj * gj;
            m[j] = static_cast<Real>(mj);
            v[j] = static_cast<Real>(vj);
            const double m_hat = mj / correction1;
            const double v_hat = vj / correction2;
            theta[j] = static_cast<Real>(theta[j] * shrink - lr * m_hat / (std::sqrt(v_hat) + eps));
        }
    }
}
// graded:end adamw_step

AdamWState AdamW::export_state() const {
    AdamWState state;
    state.step = step_;
    for (size_t i = 0; i < params_.size(); ++i) state.params.push_back({names_[i], m_[i], v_[i]});
    return state;
}

void AdamW::import_state(const AdamWState& state) {
    std::unordered_map<std::string, size_t> index;
    for (size_t i = 0; i < names_.size(); ++i) index[names_[i]] = i;
    std::vector<bool> filled(names_.size(), false);
    for (const AdamWState::Moments& entry : state.params) {
        const auto it = index.find(entry.name);
        if (it == index.end())
            throw std::invalid_argument("optimizer state has moments for '" + entry.name +
                                        "', which is not a parameter of this model");
        const size_t i = it->second;
        const size_t n = params_[i].tensor.numel();
        if (entry.m.size() != n || entry.v.size() != n)
            throw std::invalid_argument(
                "optimizer state for '" + entry.name + "' has " + std::to_string(entry.m.size()) +
                " / " + std::to_string(entry.v.size()) + " moment values but the parameter has " +
                std::to_string(n) + " elements (shape " + shape_str(params_[i].tensor.shape()) +
                ")");
        if (filled[i])
            throw std::invalid_argument("optimizer state lists '" + entry.name + "' twice");
        filled[i] = true;
    }
    for (size_t i = 0; i < names_.size(); ++i)
        if (!filled[i])
            throw std::invalid_argument("optimizer state has no moments for parameter '" +
                                        names_[i] + "'");
    // All checked: only now change anything.
    for (const AdamWState::Moments& entry : state.params) {
        const size_t i = index[entry.name];
        m_[i] = entry.m;
        v_[i] = entry.v;
    }
    step_ = state.step;
}

}  // namespace rf
