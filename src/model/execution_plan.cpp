// Stage 5 — model: the fast path, chosen in one place (see execution_plan.hpp).
#include "model/execution_plan.hpp"

#include "model/fused_attention.hpp"

namespace rf {

ExecutionPlan execution_plan(const ModelConfig& config) {
    ExecutionPlan plan;
    plan.fused_attention = config.fused && config.attention == AttentionKind::softmax;
    plan.vectorized_gelu = config.fused;
    plan.fused_residual_norm = config.fused;
    plan.split_products = config.fused;
    plan.packed_qkv = config.fused;
    plan.fused_decoder_loss = config.fused;
    plan.vectorized_adamw = config.fused;
    return plan;
}

bool use_fused_attention(const ExecutionPlan& plan, PositionScheme& position,
                         bool attention_dropout_active, RopeTable** table) {
    *table = nullptr;
    return plan.fused_attention && !attention_dropout_active && position.rotation_only(table);
}

Tensor fused_self_attention(const ExecutionPlan& plan, const Tensor& x, const Linear& query,
                            const Linear& key, const Linear& value, size_t num_heads,
                            RopeTable* table, bool causal) {
    if (!plan.packed_qkv)
        return fused_attention(query(x), key(x), value(x), num_heads, table, causal);
    const Tensor qkv = stacked_linear(x, {query.weight, key.weight, value.weight},
                                      {query.bias, key.bias, value.bias});  // [B,T,3C]
    return fused_attention_packed(qkv, num_heads, table, causal);
}

Tensor tied_decoder(const Tensor& z, const Tensor& embeddings, const Tensor& bias) {
    return add(matmul(z, embeddings, false, true), bias);
}

Tensor decoder_loss(const ExecutionPlan& plan, const Tensor& z, const Tensor& embeddings,
                    const Tensor& bias, const std::vector<int>& targets, int ignore_index,
                    Tensor* logits) {
    if (plan.fused_decoder_loss)
        return linear_cross_entropy(z, embeddings, bias, targets, ignore_index, logits);
    *logits = tied_decoder(z, embeddings, bias);
    return cross_entropy(*logits, targets, ignore_index);
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
