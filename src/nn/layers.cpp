// Stage 3 — nn: Linear and LayerNorm parameters and their initialisation.
#include "nn/layers.hpp"

namespace rf {

Tensor normal_parameter(const Shape& shape, double std, Rng& rng, const std::string& name) {
    Tensor t = Tensor::zeros(shape, true);
    Real* p = t.data();
    for (size_t i = 0; i < t.numel(); ++i) p[i] = static_cast<Real>(std * rng.normal());
    t.set_name(name);
    return t;
}

Tensor constant_parameter(const Shape& shape, Real value, const std::string& name) {
    Tensor t = Tensor::full(shape, value, true);
    t.set_name(name);
    return t;
}

// W ~ normal(0, init_std²) [out, in]; b = 0 [out]   (BERT / RoFormer initialisation)
Linear::Linear(size_t in, size_t out, double init_std, Rng& rng, const std::string& prefix)
    : weight(normal_parameter({out, in}, init_std, rng, prefix + ".weight")),
      bias(constant_parameter({out}, Real(0), prefix + ".bias")) {}

void Linear::collect(std::vector<NamedParameter>& params) const {
    params.emplace_back(weight);
    params.emplace_back(bias);
}

// γ = 1, β = 0; HF names them LayerNorm.weight / LayerNorm.bias
LayerNorm::LayerNorm(size_t size, double eps_, const std::string& prefix)
    : gamma(constant_parameter({size}, Real(1), prefix + ".weight")),
      beta(constant_parameter({size}, Real(0), prefix + ".bias")),
      eps(static_cast<Real>(eps_)) {}

void LayerNorm::collect(std::vector<NamedParameter>& params) const {
    params.emplace_back(gamma);
    params.emplace_back(beta);
}

}  // namespace rf
