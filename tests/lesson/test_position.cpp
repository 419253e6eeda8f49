// Stage 4 tests — the position schemes behind one interface: values checked against hand
// computations, config validation, the factory. Gradients are in gradcheck/test_position_grad.cpp.
//
// Legend: B batch, T length, C hidden, H heads, D = C / H head size.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "tensor/xtensor_headers.hpp"  // xt::ones

#include "position/position.hpp"
#include "position/schemes.hpp"
#include "tensor/random.hpp"

using namespace rf;

namespace {

PositionConfig config_for(const std::string& scheme) {
    PositionConfig c;
    c.scheme = parse_enum<PositionKind>(scheme, "position.scheme");
    return c;
}

Tensor random_tensor(const Shape& shape, Rng& rng) {
    Tensor t = Tensor::zeros(shape);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<Real>(rng.normal());
    return t;
}

}  // namespace

TEST_CASE("position: the factory builds each scheme by name") {
    Rng rng(1);
    CHECK(make_position_scheme(config_for("none"), 16, 2, rng)->name() == "none");
    CHECK(make_position_scheme(config_for("learned"), 16, 2, rng)->name() == "learned");
    CHECK(make_position_scheme(config_for("sinusoidal"), 16, 2, rng)->name() == "sinusoidal");
    CHECK(make_position_scheme(config_for("alibi"), 16, 2, rng)->name() == "alibi");
    CHECK(make_position_scheme(config_for("rope"), 16, 2, rng)->name() == "rope_interleaved");
    PositionConfig half = config_for("rope");
    half.pairing = RopePairing::half;
    CHECK(make_position_scheme(half, 16, 2, rng)->name() == "rope_half");
}

TEST_CASE("position: none does nothing anywhere") {
    Rng rng(2);
    auto scheme = make_position_scheme(config_for("none"), 8, 2, rng);
    Tensor x = random_tensor({1, 3, 8}, rng);
    CHECK(scheme->embed(x).impl() == x.impl());
    Tensor q = random_tensor({1, 2, 3, 4}, rng), k = q, v = q;
    scheme->rotate(q, k, v);
    CHECK(q.impl() == v.impl());
    Tensor s = random_tensor({1, 2, 3, 3}, rng);
    CHECK(scheme->bias_scores(s).impl() == s.impl());
    CHECK(scheme->parameters().empty());
}

TEST_CASE("sinusoidal: values are Vaswani's sin/cos table, added to x") {
    // C = 4: pair 0 has frequency base^0 = 1, pair 1 has base^(−2/4) = 1/sqrt(base).
    for (double base : {10000.0, 100.0}) {
        SinusoidalPosition scheme(4, base);
        Tensor x = Tensor::full({2, 3, 4}, Real(0.5));
        Tensor y = scheme.embed(x, 5);
        const double f1 = 1.0 / std::sqrt(base);
        for (size_t b = 0; b < 2; ++b)
            for (size_t t = 0; t < 3; ++t) {
                const double m = 5.0 + double(t);
                const double expected[4] = {std::sin(m), std::cos(m), std::sin(m * f1),
                                            std::cos(m * f1)};
                for (size_t d = 0; d < 4; ++d)
                    CHECK(y.data()[(b * 3 + t) * 4 + d] ==
                          doctest::Approx(0.5 + expected[d]).epsilon(1e-6));
            }
        CHECK(scheme.capacity() == 8);
        scheme.embed(Tensor::zeros({1, 2, 4}));  // shorter: the table keeps the longest
        CHECK(scheme.capacity() == 8);
    }
    // position 0 is (0, 1, 0, 1, …) for any width
    const Array row0 = sinusoidal_table(1, 6, 10000.0);
    for (size_t d = 0; d < 6; ++d) CHECK(row0(0, d) == Real(d % 2));
    // the fixed table is not a parameter
    Rng rng(3);
    CHECK(make_position_scheme(config_for("sinusoidal"), 8, 2, rng)->parameters().empty());
}

TEST_CASE("sinusoidal: position.sinusoidal_scale sets the amplitude, 0 means 1/sqrt(C)") {
    Rng rng(3);
    const size_t C = 16;
    const Array raw = sinusoidal_table(5, C, 10000.0);
    for (double scale : {0.0, 0.3, 1.0}) {
        PositionConfig config = config_for("sinusoidal");
        config.sinusoidal_scale = scale;
        auto scheme = make_position_scheme(config, C, 2, rng);
        const Tensor y = scheme->embed(Tensor::zeros({1, 5, C}));
        const double a = scale > 0.0 ? scale : 1.0 / std::sqrt(double(C));
        for (size_t i = 0; i < 5 * C; ++i)
            CHECK(y.data()[i] == doctest::Approx(a * raw.data()[i]).epsilon(1e-6));
    }
    PositionConfig bad = config_for("sinusoidal");
    bad.sinusoidal_scale = -1.0;
    CHECK_THROWS_WITH_AS(validate_position_config(bad, C, 2),
                         doctest::Contains("position.sinusoidal_scale"), std::invalid_argument);
}

TEST_CASE("learned: table shape, name, init and values added at offset") {
    Rng rng(4);
    PositionConfig c = config_for("learned");
    c.max_positions = 512;
    auto scheme = make_position_scheme(c, 64, 4, rng);
    auto params = scheme->parameters();
    REQUIRE(params.size() == 1);
    Tensor table = params[0];
    CHECK(table.name() == "roformer.embeddings.position_embeddings.weight");
    CHECK(table.shape() == Shape{512, 64});
    CHECK(table.requires_grad());
    double mean = 0.0, square = 0.0;
    for (size_t i = 0; i < table.numel(); ++i) {
        mean += table.data()[i];
        square += double(table.data()[i]) * table.data()[i];
    }
    mean /= double(table.numel());
    const double stddev = std::sqrt(square / double(table.numel()) - mean * mean);
    CHECK(std::abs(mean) < 1e-3);
    CHECK(stddev == doctest::Approx(0.02).epsilon(0.03));

    Tensor x = random_tensor({2, 3, 64}, rng).set_requires_grad(true);
    Tensor y = scheme->embed(x, 7);
    for (size_t b = 0; b < 2; ++b)
        for (size_t t = 0; t < 3; ++t)
            for (size_t d = 0; d < 64; ++d)
                CHECK(y.data()[(b * 3 + t) * 64 + d] ==
                      x.data()[(b * 3 + t) * 64 + d] + table.data()[(7 + t) * 64 + d]);

    // d/dx = 1; d/dtable[7 + t] = Σ_b dout = 2 for dout = 1; other rows 0
    y.backward(Array(xt::ones<Real>(y.value().shape())));
    for (size_t i = 0; i < x.numel(); ++i) CHECK(x.grad().data()[i] == Real(1));
    for (size_t row = 0; row < 512; ++row)
        CHECK(table.grad()(row, 5) == Real(row >= 7 && row < 10 ? 2 : 0));
}

TEST_CASE("learned: refuses sequences longer than max_positions") {
    Rng rng(5);
    PositionConfig c = config_for("learned");
    c.max_positions = 8;
    auto scheme = make_position_scheme(c, 4, 1, rng);
    CHECK_NOTHROW(scheme->embed(Tensor::zeros({1, 8, 4})));
    try {
        scheme->embed(Tensor::zeros({1, 6, 4}), 3);
        FAIL("expected std::invalid_argument");
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        CHECK(what.find("sequence length 9") != std::string::npos);
        CHECK(what.find("position.max_positions=8") != std::string::npos);
    }
    CHECK_THROWS_AS(scheme->embed(Tensor::zeros({2, 9, 4})), std::invalid_argument);
}

TEST_CASE("alibi: slopes are the standard geometric sequence") {
    auto check = [](size_t H, std::vector<double> expected_log2) {
        const auto slopes = alibi_slopes(H);
        REQUIRE(slopes.size() == H);
        for (size_t h = 0; h < H; ++h) CHECK(slopes[h] == std::exp2(expected_log2[h]));
    };
    check(1, {-8});
    check(2, {-4, -8});
    check(4, {-2, -4, -6, -8});
    check(8, {-1, -2, -3, -4, -5, -6, -7, -8});
    // not a power of two: the 4-head slopes, then every other slope of the 8-head list
    check(6, {-2, -4, -6, -8, -1, -3});
    check(3, {-4, -8, -2});
}

TEST_CASE("alibi: bias values on a small case") {
    Rng rng(6);
    auto scheme = make_position_scheme(config_for("alibi"), 8, 2, rng);  // slopes 1/16, 1/256
    Tensor scores = Tensor::full({2, 2, 3, 3}, Real(1));
    Tensor out = scheme->bias_scores(scores);
    const double distance[3][3] = {{0, 1, 2}, {1, 0, 1}, {2, 1, 0}};
    const double slope[2] = {1.0 / 16, 1.0 / 256};
    for (size_t b = 0; b < 2; ++b)
        for (size_t h = 0; h < 2; ++h)
            for (size_t i = 0; i < 3; ++i)
                for (size_t j = 0; j < 3; ++j)
                    CHECK(out.value()(b, h, i, j) ==
                          doctest::Approx(1.0 - slope[h] * distance[i][j]));
    CHECK_THROWS_AS(scheme->bias_scores(Tensor::zeros({1, 3, 3, 3})), std::invalid_argument);
}

TEST_CASE("rope scheme: rotates q and k, and v only with rotate_values") {
    Rng rng(7);
    PositionConfig c = config_for("rope");
    c.base = 321.0;
    Tensor q0 = random_tensor({1, 2, 4, 8}, rng), k0 = random_tensor({1, 2, 4, 8}, rng),
           v0 = random_tensor({1, 2, 4, 8}, rng);
    for (bool rotate_values : {false, true}) {
        c.rotate_values = rotate_values;
        auto scheme = make_position_scheme(c, 16, 2, rng);
        RopeTable reference(rope_options_from_config(c, 8));
        Tensor q = q0, k = k0, v = v0;
        scheme->rotate(q, k, v, 3);
        const Tensor expected_q = rope(q0, reference, 3), expected_v = rope(v0, reference, 3);
        for (size_t i = 0; i < q.numel(); ++i) CHECK(q.data()[i] == expected_q.data()[i]);
        if (rotate_values)
            for (size_t i = 0; i < v.numel(); ++i) CHECK(v.data()[i] == expected_v.data()[i]);
        else
            CHECK(v.impl() == v0.impl());
    }
    auto scheme = make_position_scheme(c, 16, 2, rng);
    Tensor wrong = random_tensor({1, 2, 4, 6}, rng), k = wrong, v = wrong;
    CHECK_THROWS_AS(scheme->rotate(wrong, k, v), std::invalid_argument);
}

TEST_CASE("position: validation errors name the key and the fix") {
    auto message = [](PositionConfig c, size_t hidden = 64, size_t heads = 4) -> std::string {
        try {
            validate_position_config(c, hidden, heads);
        } catch (const std::invalid_argument& e) { return e.what(); }
        return "";
    };
    auto contains = [](const std::string& s, const char* key) {
        return s.find(key) != std::string::npos;
    };
    PositionConfig c;
    CHECK(message(c).empty());

    // Unknown words are refused where they are read (once, naming the key)
    CHECK_THROWS_WITH_AS(config_for("rotary"), doctest::Contains("position.scheme"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(parse_rope_pairing("neox"), doctest::Contains("position.pairing"),
                         std::invalid_argument);
    c = config_for("rope");
    CHECK(contains(message(c, 60, 4), "position.scheme"));  // head size 15 is odd
    CHECK(contains(message(c, 60, 4), "15"));
    c = config_for("learned");
    CHECK(message(c, 60, 4).empty());  // odd heads are fine without rope
    c = config_for("rope");
    c.rotary_fraction = 0.3;  // 4.8 dims
    CHECK(contains(message(c), "position.rotary_fraction"));
    c.rotary_fraction = 0.1875;  // 3 dims: whole but odd
    CHECK(contains(message(c), "position.rotary_fraction"));
    c.rotary_fraction = 1.5;  // more than the head
    CHECK(contains(message(c), "position.rotary_fraction"));
    c.rotary_fraction = 0.0;
    CHECK(contains(message(c), "position.rotary_fraction"));
    c.rotary_fraction = 0.5;
    CHECK(message(c).empty());
    c = config_for("rope");
    c.base = 0.0;
    CHECK(contains(message(c), "position.base"));
    c.base = -5.0;
    CHECK(contains(message(c), "position.base"));
    c = config_for("rope");
    c.interpolation_factor = 0.0;
    CHECK(contains(message(c), "position.interpolation_factor"));
    c = config_for("rope");
    c.ntk_factor = -1.0;
    CHECK(contains(message(c), "position.ntk_factor"));
    c = config_for("rope");
    c.ntk_factor = 2.0;
    c.rotary_fraction = 0.125;  // r = 2
    CHECK(contains(message(c), "position.ntk_factor"));
    c = config_for("learned");
    c.max_positions = 0;
    CHECK(contains(message(c), "position.max_positions"));
    c = config_for("rope");
    CHECK(contains(message(c, 64, 3), "model.num_heads"));
    // The rules run once, at config load (config/validate.cpp calls validate_position_config);
    // the factory and RopeTable only guard against options that skipped them.
    Rng rng(8);
    c = config_for("rope");
    CHECK_THROWS_WITH_AS(make_position_scheme(c, 64, 3, rng), doctest::Contains("internal"),
                         std::logic_error);
    CHECK_NOTHROW(RopeTable(rope_options_from_config(c, 6)));  // r = 6 of D = 6 is fine …
    c.rotary_fraction = 0.5;                                    // … r = 3 is not
    CHECK_THROWS_WITH_AS(RopeTable(rope_options_from_config(c, 6)), doctest::Contains("internal"),
                         std::logic_error);
}
