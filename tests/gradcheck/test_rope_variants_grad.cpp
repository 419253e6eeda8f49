// Gradient checks (Real = double) for the RoPE variants in the graph: xPos (both directions),
// learned frequencies (dx and dθ through the angles), 2-D axial RoPE, rope() with explicit
// position ids, and the scaled tables (interpolation and NTK, YaRN's temperature in the rows,
// dynamic NTK's grown base) read alike by both directions.
//
// Legend: B batch, H heads, T length, D head size, r rotary dims.
#include "gradcheck/gradcheck.hpp"
#include "position/position.hpp"
#include "position/rope.hpp"
#include "ropelab/rope_variants.hpp"
#include "rope_options.hpp"

using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

TEST_CASE("xpos gradient: queries and keys, both pairings, partial rotary, offset") {
    for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        const std::string pairing_name = rf::rope_pairing_name(pairing);
        CAPTURE(pairing_name);
        rf::Rng rng(11);
        rf::RopeTable table(rf::testing::rope_options(pairing, 10, 8, 300.0));
        for (int direction : {+1, -1})
            gradcheck(
                [&](const Inputs& in) { return rf::xpos(in[0], table, 0.4, 6.0, direction, 4); },
                {randn({2, 2, 5, 10}, rng)});
    }
}

TEST_CASE("xpos gradient through the scheme's rotate (q and k at once)") {
    rf::PositionConfig config;
    config.xpos = true;
    config.xpos_scale_base = 10.0;
    rf::Rng rng(12);
    auto scheme = rf::make_position_scheme(config, 16, 2, rng);
    gradcheck(
        [&](const Inputs& in) {
            Tensor q = in[0], k = in[1], v = in[2];
            scheme->rotate(q, k, v, 3);
            return rf::concat({q, k, v}, 0);
        },
        {randn({1, 2, 4, 8}, rng), randn({1, 2, 4, 8}, rng), randn({1, 2, 4, 8}, rng)});
}

TEST_CASE("learned frequencies gradient: dx and dθ, both pairings, partial rotary, offset") {
    for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        const std::string pairing_name = rf::rope_pairing_name(pairing);
        CAPTURE(pairing_name);
        rf::Rng rng(13);
        const rf::RopeOptions o = rf::testing::rope_options(pairing, 10, 8, 50.0);
        Tensor theta = randn({4}, rng, 0.5);
        gradcheck(
            [&](const Inputs& in) { return rf::rope_learned_frequencies(in[0], in[1], o, 2); },
            {randn({2, 3, 4, 10}, rng), theta});
    }
}

TEST_CASE("learned frequencies gradient through the scheme (θ shared by q and k)") {
    rf::PositionConfig config;
    config.learned_frequencies = true;
    config.base = 100.0;
    rf::Rng rng(14);
    auto scheme = rf::make_position_scheme(config, 16, 2, rng);
    Tensor theta = scheme->parameters()[0];
    gradcheck(
        [&](const Inputs& in) {
            Tensor q = in[0], k = in[1], v = in[2];
            scheme->rotate(q, k, v, 1);
            return rf::concat({q, k}, 0);
        },
        {randn({1, 2, 4, 8}, rng), randn({1, 2, 4, 8}, rng), randn({1, 2, 4, 8}, rng, 1.0, false),
         theta});
}

TEST_CASE("2-D rope gradient, both pairings") {
    for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        rf::Rng rng(15);
        rf::RopeTable axis(
            rf::rope_2d_axis_options(rf::testing::rope_options(pairing, 10, 8, 40.0)));
        const std::vector<size_t> rows{0, 3, 3, 1, 9}, cols{2, 2, 0, 7, 4};
        gradcheck([&](const Inputs& in) { return rf::rope_2d(in[0], axis, rows, cols); },
                  {randn({2, 5, 10}, rng)});
    }
}

TEST_CASE("rope gradient with scaled tables: yarn, llama3, dynamic ntk past L₀") {
    for (rf::RopeScaling scaling :
         {rf::RopeScaling::yarn, rf::RopeScaling::llama3, rf::RopeScaling::dynamic_ntk}) {
        CAPTURE(std::string(rf::enum_name(scaling)));
        rf::RopeOptions o = rf::testing::rope_options(rf::RopePairing::half, 8, 8, 1000.0);
        o.scaling = scaling;
        o.scaling_factor = 3.0;
        o.original_max_positions = 4;
        rf::RopeTable table(o);
        rf::Rng rng(16);
        gradcheck([&](const Inputs& in) { return rf::rope(in[0], table, 2); },
                  {randn({2, 6, 8}, rng)});
    }
}

TEST_CASE("rope gradient: explicit position ids, interpolation and NTK scaling") {
    for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        rf::Rng rng(2);
        rf::RopeTable table(rf::testing::rope_options(pairing, 6, 6, 2000.0, 2.5, 4.0));
        const std::vector<size_t> ids{17, 0, 4, 4};
        gradcheck([&](const Inputs& in) { return rf::rope(in[0], table, ids); },
                  {randn({3, 4, 6}, rng)});
    }
}
