// Stage 4 — position: the concrete schemes behind PositionScheme, and their helper ops.
//
// Legend: B batch, T sequence length, C hidden size, H heads, D head size, P table rows.
// make_position_scheme (position.cpp) is the usual way in; the classes are declared here so
// tests can reach their tables and helpers.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "position/position.hpp"
#include "position/rope.hpp"

namespace rf {

// ---- learned.cpp / sinusoidal.cpp: absolute tables added to the token embeddings -------
// out[b, t, :] = x[b, t, :] + table[offset + t, :]   x:[B,T,C] table:[P,C] → out:[B,T,C]
// Backward: dx += dout; dtable[offset + t] += Σ_b dout[b, t] (only if table requires grad).
Tensor add_position_rows(const Tensor& x, const Tensor& table, size_t offset);

class LearnedPosition : public PositionScheme {
public:
    // table [max_positions, hidden] ~ normal(0, 0.02²), named
    // "roformer.embeddings.position_embeddings.weight".
    LearnedPosition(size_t max_positions, size_t hidden, Rng& init_rng);
    std::string name() const override { return "learned"; }
    Tensor embed(const Tensor& x, size_t offset = 0) override;  // throws past max_length()
    size_t max_length() const override { return table_.size(0); }
    std::vector<Tensor> parameters() override { return {table_}; }
    // Acts in embed() only: the fused kernel may run its attention (no rotation).
    bool rotation_only(RopeTable** table) override {
        *table = nullptr;
        return true;
    }
    Tensor& table() { return table_; }

private:
    Tensor table_;
};

// Vaswani et al.: PE[m, 2i] = sin(m / base^(2i/C)), PE[m, 2i+1] = cos(m / base^(2i/C)),
// times `amplitude`. Values in double, rounded to Real once. Rows [0, length) of the table.
Array sinusoidal_table(size_t length, size_t hidden, double base, double amplitude = 1.0);

// position.sinusoidal_scale → the amplitude: 0 means 1/sqrt(C) (see position.hpp).
double sinusoidal_amplitude(double sinusoidal_scale, size_t hidden);

class SinusoidalPosition : public PositionScheme {
public:
    SinusoidalPosition(size_t hidden, double base, double amplitude = 1.0)
        : hidden_(hidden), base_(base), amplitude_(amplitude) {}
    std::string name() const override { return "sinusoidal"; }
    Tensor embed(const Tensor& x, size_t offset = 0) override;
    size_t capacity() const { return table_.defined() ? table_.size(0) : 0; }
    // Acts in embed() only: the fused kernel may run its attention (no rotation).
    bool rotation_only(RopeTable** table) override {
        *table = nullptr;
        return true;
    }

private:
    size_t hidden_;
    double base_;
    double amplitude_;
    Tensor table_;  // fixed (no grad), grown to the longest offset + T seen
};

// ---- RopePosition, in rope.cpp ----------------------------------------------------------
class RopePosition : public PositionScheme {
public:
    RopePosition(const RopeOptions& options, bool rotate_values);
    std::string name() const override {
        return std::string("rope_") + rope_pairing_name(table_.options().pairing);
    }
    // q, k (and v if rotate_values) ← rope(·, table, offset)
    void rotate(Tensor& q, Tensor& k, Tensor& v, size_t offset = 0) override;
    // RoPE adds nothing to the embeddings and no bias to the scores: both pass through.
    Tensor embed(const Tensor& x, size_t offset = 0) override;
    Tensor bias_scores(const Tensor& scores) override;
    RopeTable& table() { return table_; }
    // The fused kernel rotates q and k with table(); rotated values it leaves to the ops, and
    // dynamic_ntk, whose table depends on the length the kernel is not told.
    bool rotation_only(RopeTable** table) override {
        *table = &table_;
        return !rotate_values_ && table_.options().scaling != RopeScaling::dynamic_ntk;
    }
    // The table v turns by (rotate_values): table()'s angles without YaRN's temperature a,
    // which belongs to the scores (q·k gains a²), not to the values.
    RopeTable& value_table();

private:
    RopeTable table_;
    std::optional<RopeTable> value_table_;  // only when table_ carries a ≠ 1 (YaRN)
    bool rotate_values_;
};

// ---- alibi.cpp: symmetric bidirectional linear bias (Press et al. 2022) ----------------
// Slopes for H heads: 2^(−8h/H), h = 1 … H when H is a power of two; otherwise the first
// n = 2^⌊log2 H⌋ of those for n heads, then every other slope of the 2n-head list.
std::vector<double> alibi_slopes(size_t num_heads);
// bias[h, i, j] = −slope_h·|i − j|   [H,T,T], a constant (no gradient)
Tensor alibi_bias(const std::vector<double>& slopes, size_t length);
// out = scores + bias (the ops stage's add, broadcast over B)   scores:[B,H,T,T]; dscores += dout
Tensor add_alibi_bias(const Tensor& scores, const std::vector<double>& slopes);

class AlibiPosition : public PositionScheme {
public:
    explicit AlibiPosition(size_t num_heads) : slopes_(alibi_slopes(num_heads)) {}
    std::string name() const override { return "alibi"; }
    // scores + alibi_bias(slopes, T), the bias kept for the last T seen
    Tensor bias_scores(const Tensor& scores) override;
    // (rotation_only stays false: the fused kernel adds no score bias, the composed ops run.)
    const std::vector<double>& slopes() const { return slopes_; }

private:
    std::vector<double> slopes_;
    Tensor bias_;  // [H,T,T], a constant (no grad)
};

class NoPosition : public PositionScheme {
public:
    std::string name() const override { return "none"; }
    // Nothing to do anywhere: the fused kernel may run its attention.
    bool rotation_only(RopeTable** table) override {
        *table = nullptr;
        return true;
    }
};

}  // namespace rf
