// Shared by the parity tests (tests/lesson/test_parity.cpp) and their fixture writers
// (tests/lesson/test_parity_writers.cpp): the comparison criterion, the set-up read from a fixture,
// the model built from init.safetensors, one forward + backward and the AdamW trajectory.
// Legend: M labelled rows, V vocabulary; the fixtures are described in tests/lesson/test_parity.cpp.
//
// Criterion (fp32 against a float64 reference). Element i of a tensor passes when
//     |ours_i − ref_i| ≤ kRelTol·|ref_i| + kScaleTol·S,   S = max_j |ref_j| over the tensor
// i.e. 1e-4 relative to the element, plus a floor of 1e-5 of the tensor's largest value for
// elements that are near zero only by cancellation (a sum of terms ≫ the result, where float32
// cannot do better than ~1e-7 of the terms). For a gradient S is at least 1 % of the largest
// gradient of the model: a gradient that is zero in exact arithmetic (the key bias's without
// RoPE — softmax ignores a constant added to a row of scores — is ~1e-17 in float64 and ~1e-9
// in float32) has no scale of its own, so it is held to 1e-7 of the model's gradients.
// The favor cases' AdamW trajectories multiply both tolerances by the fixture's
// parity.adamw_tolerance_factor (make_reference.py says why; everything else uses 1).
// A table per tensor prints S, the max absolute error, the max relative error (over elements
// ≥ 1e-3·S) and the worst error / allowed ratio (≤ 1 passes).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "io/safetensors.hpp"
#include "model/roformer.hpp"
#include "nn/adamw.hpp"
#include "train/schedule.hpp"

namespace rf::parity {

constexpr double kRelTol = 1e-4;
constexpr double kScaleTol = 1e-5;

inline std::string reference_path(const std::string& file) {
    return std::string(RF_SOURCE_DIR) + "/tests/reference/" + file;
}

// ---- the comparison ---------------------------------------------------------------------
struct Comparison {
    std::string name;
    double scale = 0, max_abs = 0, max_rel = 0, worst = 0;  // worst = max error / allowed
    bool ok() const { return worst <= 1.0; }
};

inline double largest_magnitude(const std::vector<float>& v) {
    double m = 0;
    for (float x : v) m = std::max(m, std::abs(double(x)));
    return m;
}

// scale_floor: the least S; factor: multiplies both tolerances (see the criterion above)
inline Comparison compare(const std::string& name, const std::vector<double>& ours,
                          const std::vector<float>& ref, double scale_floor = 0,
                          double factor = 1) {
    REQUIRE_MESSAGE(ours.size() == ref.size(),
                    name << ": " << ours.size() << " values, the reference has " << ref.size());
    Comparison c{name};
    c.scale = std::max(largest_magnitude(ref), scale_floor);
    for (size_t i = 0; i < ref.size(); ++i) {
        const double r = ref[i], d = std::abs(ours[i] - r);
        const double allowed = factor * (kRelTol * std::abs(r) + kScaleTol * c.scale);
        c.max_abs = std::max(c.max_abs, d);
        if (std::abs(r) >= 1e-3 * c.scale && r != 0)
            c.max_rel = std::max(c.max_rel, d / std::abs(r));
        c.worst = std::max(c.worst, allowed > 0 ? d / allowed : (d > 0 ? INFINITY : 0.0));
        if (!std::isfinite(ours[i])) c.worst = INFINITY;
    }
    return c;
}

inline std::vector<double> values_of(const Array& a) {
    return std::vector<double>(a.begin(), a.end());
}

inline void print(const Comparison& c) {
    std::printf("  %-58s S %.3e  abs %.2e  rel %.2e  err/tol %.3f%s\n", c.name.c_str(), c.scale,
                c.max_abs, c.max_rel, c.worst, c.ok() ? "" : "  <-- MISMATCH");
}

// ---- the fixed set-up: config from metadata, weights and batch from init.safetensors ------
inline const SafetensorsFile& init_file() {
    static const SafetensorsFile file = read_safetensors(reference_path("init.safetensors"));
    return file;
}

inline std::string meta(const SafetensorsFile& f, const std::string& key) {
    const auto it = f.metadata.find(key);
    if (it == f.metadata.end()) throw std::runtime_error("fixture metadata has no '" + key + "'");
    return it->second;
}
inline double meta_number(const SafetensorsFile& f, const std::string& key) {
    return std::stod(meta(f, key));
}
inline size_t meta_size(const SafetensorsFile& f, const std::string& key) {
    return static_cast<size_t>(std::stoull(meta(f, key)));
}
// Keys that only the linear-attention / causal fixtures carry; older fixtures mean the default.
inline std::string meta_or(const SafetensorsFile& f, const std::string& key,
                           const std::string& fallback) {
    const auto it = f.metadata.find(key);
    return it == f.metadata.end() ? fallback : it->second;
}

// Next-token labels, the causal LM's: labels[b, t] = ids[b, t + 1], the last position −100.
inline std::vector<int> next_token_labels(const std::vector<int>& ids, size_t batch,
                                          size_t seq_len) {
    std::vector<int> labels(ids.size(), -100);
    for (size_t b = 0; b < batch; ++b)
        for (size_t t = 0; t + 1 < seq_len; ++t) labels[b * seq_len + t] = ids[b * seq_len + t + 1];
    return labels;
}

struct Setup {
    ModelConfig model;
    FastConfig fast;  // the path the model runs (fast.fused)
    PositionConfig position;
    TrainConfig train;
    size_t batch = 0, seq_len = 0;
    std::vector<int> ids, labels;
    double adamw_tolerance_factor = 1;  // parity.adamw_tolerance_factor
};

// Everything make_reference.py used, read back from the fixture's own metadata (the batch
// not yet: setup_from reads the MLM one; the classifier's is read by its own test).
inline Setup setup_from_metadata(const SafetensorsFile& f) {
    Setup s;
    s.model.vocab_size = meta_size(f, "model.vocab_size");
    s.model.hidden = meta_size(f, "model.hidden");
    s.model.num_heads = meta_size(f, "model.num_heads");
    s.model.num_layers = meta_size(f, "model.num_layers");
    s.model.ffn = meta_size(f, "model.ffn");
    s.model.layer_norm_eps = meta_number(f, "model.layer_norm_eps");
    s.model.dropout = s.model.attention_dropout = 0.0;
    s.position.scheme = parse_enum<PositionKind>(meta(f, "position.scheme"), "position.scheme");
    s.position.pairing = parse_enum<RopePairing>(meta(f, "position.pairing"), "position.pairing");
    s.position.rotate_values = meta(f, "position.rotate_values") == "true";
    s.position.rope_placement = parse_enum<RopePlacement>(
        meta_or(f, "position.rope_placement", "eq19_features"), "position.rope_placement");
    s.position.base = meta_number(f, "position.base");
    s.position.max_positions = meta_size(f, "position.max_positions");
    s.position.sinusoidal_scale = meta_number(f, "position.sinusoidal_scale");
    s.model.attention =
        parse_enum<AttentionKind>(meta_or(f, "model.attention", "softmax"), "model.attention");
    s.model.feature_map =
        parse_enum<FeatureMap>(meta_or(f, "model.feature_map", "elu1"), "model.feature_map");
    s.model.random_features = std::stoull(meta_or(f, "model.random_features", "64"));
    s.model.causal = meta_or(f, "model.causal", "false") == "true";
    s.adamw_tolerance_factor = std::stod(meta_or(f, "parity.adamw_tolerance_factor", "1"));
    s.train.steps = meta_size(f, "train.steps");
    s.train.lr = meta_number(f, "train.lr");
    s.train.min_lr_ratio = meta_number(f, "train.min_lr_ratio");
    s.train.warmup_steps = meta_size(f, "train.warmup_steps");
    s.train.schedule = parse_enum<Schedule>(meta(f, "train.schedule"), "train.schedule");
    s.train.beta1 = meta_number(f, "train.beta1");
    s.train.beta2 = meta_number(f, "train.beta2");
    s.train.eps = meta_number(f, "train.eps");
    s.train.weight_decay = meta_number(f, "train.weight_decay");
    s.train.grad_clip = meta_number(f, "train.grad_clip");
    s.batch = meta_size(f, "data.batch_size");
    s.seq_len = meta_size(f, "data.seq_len");
    return s;
}

inline Setup setup_from(const SafetensorsFile& f) {
    Setup s = setup_from_metadata(f);
    for (float v : f.at("batch.input_ids").data) s.ids.push_back(int(v));
    if (s.model.causal) {  // built here from the ids; the fixture's copy must agree
        s.labels = next_token_labels(s.ids, s.batch, s.seq_len);
        std::vector<int> written;
        for (float v : f.at("batch.labels").data) written.push_back(int(v));
        REQUIRE_MESSAGE(written == s.labels, "the fixture's CLM labels are not ids shifted by one");
    } else {
        for (float v : f.at("batch.labels").data) s.labels.push_back(int(v));
    }
    return s;
}

// The model of `s`, with every parameter copied from init.safetensors by name, and every
// buffer (FAVOR's W) from the fixture — the W PyTorch used, read from init_favor.safetensors.
inline std::unique_ptr<RoFormer> build_model(const Setup& s, const SafetensorsFile& fixture) {
    auto model = make_model(s.model, s.position, 1, s.fast);
    for (const NamedParameter& p : model->parameters()) {
        Tensor t = p.tensor;
        copy_into(init_file().at(t.name(), "tests/reference/init.safetensors"), t);
    }
    for (Tensor b : model->buffers()) copy_into(fixture.at(b.name(), "the parity fixture"), b);
    return model;
}

// One forward + backward; every comparison of logits, loss and gradients (in parameter order).
inline std::vector<Comparison> forward_backward_comparisons(RoFormer& model, const Setup& s,
                                                            const SafetensorsFile& ref,
                                                            const std::string& corrupt_grad = "") {
    for (const NamedParameter& p : model.parameters()) Tensor(p.tensor).zero_grad();
    ModelOutput out = model.forward(s.ids, s.labels, s.batch, s.seq_len, false);
    out.loss.backward();
    std::vector<Comparison> result;
    result.push_back(compare("logits", values_of(out.logits.value()), ref.at("logits").data));
    result.push_back(compare("loss", {double(out.loss.item())}, ref.at("loss").data));
    double largest_gradient = 0;
    for (const NamedParameter& p : model.parameters())
        largest_gradient =
            std::max(largest_gradient, largest_magnitude(ref.at("grad." + p.tensor.name()).data));
    for (const NamedParameter& p : model.parameters()) {
        Tensor t = p.tensor;
        std::vector<double> g = values_of(t.grad());
        const NamedTensor& r = ref.at("grad." + t.name(), "the parity fixture");
        if (t.name() == corrupt_grad) {  // the can-it-fail test: one element off by 1 %
            size_t i = 0;
            for (size_t j = 0; j < r.data.size(); ++j)
                if (std::abs(r.data[j]) > std::abs(r.data[i])) i = j;
            g[i] *= 1.01;
        }
        result.push_back(compare("grad." + t.name(), g, r.data, 1e-2 * largest_gradient));
    }
    return result;
}

inline SafetensorsFile load_fixture(const std::string& scheme) {
    return read_safetensors(reference_path("parity_" + scheme + ".safetensors"));
}

// The trainer's loop order: forward → zero_grad → backward → clip → lr_at(step) → step.
struct Trajectory {
    std::vector<double> losses, grad_norms, lrs;  // losses has one more: after the last update
};

// lr_shift: ask the schedule for step + lr_shift (only the can-fail test sets it).
inline Trajectory run_adamw(RoFormer& model, const Setup& s, size_t lr_shift = 0) {
    AdamW optimizer(model.parameters(),
                    AdamWOptions{s.train.beta1, s.train.beta2, s.train.eps, s.train.weight_decay});
    Trajectory t;
    for (size_t step = 0; step < s.train.steps; ++step) {
        ModelOutput out = model.forward(s.ids, s.labels, s.batch, s.seq_len, true);
        t.losses.push_back(out.loss.item());
        optimizer.zero_grad();
        out.loss.backward();
        t.grad_norms.push_back(optimizer.clip_grad_norm(s.train.grad_clip));
        t.lrs.push_back(lr_at(step + lr_shift, s.train));
        optimizer.step(t.lrs.back());
    }
    NoGradGuard no_grad;
    t.losses.push_back(model.forward(s.ids, s.labels, s.batch, s.seq_len, false).loss.item());
    return t;
}

}  // namespace rf::parity
