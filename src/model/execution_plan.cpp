// Stage 5 — model: the fast path, chosen in one place (see execution_plan.hpp).
#include "model/execution_plan.hpp"

namespace rf {

ExecutionPlan execution_plan(const ModelConfig& config) {
    ExecutionPlan plan;
    plan.fused_attention = config.fused && config.attention == AttentionKind::softmax;
    plan.vectorized_gelu = config.fused;
    plan.fused_residual_norm = config.fused;
    plan.split_products = config.fused;
    plan.vectorized_adamw = config.fused;
    return plan;
}

bool use_fused_attention(const ExecutionPlan& plan, PositionScheme& position,
                         bool attention_dropout_active, RopeTable** table) {
    *table = nullptr;
    return plan.fused_attention && !attention_dropout_active && position.rotation_only(table);
}

Tensor activation(const ExecutionPlan& plan, const Tensor& x) {
    return plan.vectorized_gelu ? gelu_vectorized(x) : gelu(x);
}

Tensor residual_norm(const ExecutionPlan& plan, const LayerNorm& norm, const Tensor& h,
                     const Tensor& r) {
    if (plan.fused_residual_norm) return add_layer_norm(h, r, norm.gamma, norm.beta, norm.eps);
    return norm(add(h, r));
}

void optimizer_step(const ExecutionPlan& plan, AdamW& optimizer, double lr) {
    if (plan.vectorized_adamw)
        optimizer.step_vectorized(lr);
    else
        optimizer.step(lr);
}

}  // namespace rf
