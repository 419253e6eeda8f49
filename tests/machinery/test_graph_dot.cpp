// graph_to_dot (src/inspect/graph_dot.hpp): the autograd graph drawn as Graphviz DOT — node and
// edge counts of tiny graphs, fan-out edges marked, names and shapes in the labels.
#include <doctest/doctest.h>

#include <regex>
#include <string>

#include "assembly/swappable_ops_for.hpp"
#include "model/roformer.hpp"
#include "ops/ops.hpp"
#include "inspect/graph_dot.hpp"
#include "tiny_model.hpp"

using namespace rf;

namespace {

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// The DOT node id ("t3") of the node whose label starts with `label`.
std::string node_id(const std::string& dot, const std::string& label) {
    std::smatch m;
    const std::regex re("(t[0-9]+) \\[label=\"" + label);
    REQUIRE(std::regex_search(dot, m, re));
    return m[1];
}

Tensor leaf(const Shape& shape, const std::string& name) {
    Tensor t = Tensor::full(shape, Real(0.5), true);
    t.set_name(name);
    return t;
}

// The graph of h = LayerNorm(x + SelfAttention(x)) for layer 0 of a tiny RoPE model, x:[1,5,16]
// named "x"; fused: model.fused (one fused_attention node) or the composed ops.
DotGraph attention_layer_graph(bool fused) {
    FastConfig fast;
    fast.fused = fused;
    RoFormer model = assembled_model(testing::tiny_model_config(10),
                                     testing::tiny_position_config("rope"), 1, fast);
    const EncoderLayer& layer = model.layers()[0];
    Tensor x = Tensor::full({1, 5, 16}, Real(0.1));
    x.set_name("x");
    Rng rng(1);
    return graph_to_dot(layer.attention_block(x, model.position(), false, 0, rng));
}

}  // namespace

TEST_CASE("graph_to_dot: y = x·x has 2 nodes, 2 edges, both fan-out") {
    Tensor x = leaf({3}, "x");
    const DotGraph g = graph_to_dot(mul(x, x));
    CHECK(g.nodes == 2);
    CHECK(g.op_nodes == 1);
    CHECK(g.leaves == 1);
    CHECK(g.edges == 2);
    CHECK(g.fan_out_edges == 2);  // x is used twice by one op: backward adds both halves
    CHECK(count(g.dot, " -> ") == 2);
    CHECK(count(g.dot, "penwidth=2.0") == 2);
    CHECK(g.dot.find("label=\"mul\\n[3]\"") != std::string::npos);
    CHECK(g.dot.find("label=\"x\\n[3]\"") != std::string::npos);
    CHECK(g.dot.rfind("digraph autograd {", 0) == 0);
}

TEST_CASE("graph_to_dot: z = a·b + a — a fans out to two ops, b does not") {
    Tensor a = leaf({2, 3}, "a"), b = leaf({2, 3}, "b");
    Tensor c = Tensor::full({2, 3}, Real(2));  // no grad: a constant input
    const DotGraph g = graph_to_dot(sub(add(mul(a, b), a), c), "z");
    CHECK(g.nodes == 6);  // a, b, c, mul, add, sub
    CHECK(g.op_nodes == 3);
    CHECK(g.leaves == 3);
    CHECK(g.edges == 6);  // a→mul, b→mul, mul→add, a→add, add→sub, c→sub
    CHECK(g.fan_out_edges == 2);
    CHECK(count(g.dot, " -> ") == g.edges);
    CHECK(count(g.dot, "[label=") == g.nodes);
    const std::string ia = node_id(g.dot, "a\\\\n"), ib = node_id(g.dot, "b\\\\n");
    CHECK(count(g.dot, ia + " -> ") == 2);
    CHECK(count(g.dot, ia + " -> ") == count(g.dot, "color=red, penwidth"));            // only a's
    CHECK(g.dot.find(ib + " -> " + node_id(g.dot, "mul") + ";") != std::string::npos);  // plain
    CHECK(g.dot.find("label=\"input\\n[2, 3]\", style=dashed") != std::string::npos);   // c
    CHECK(g.dot.find("fillcolor") != std::string::npos);  // parameters are filled
    CHECK(g.dot.find("label=\"z\"") != std::string::npos);
    CHECK(count(g.dot, "peripheries=2") == 1);  // the root
}

TEST_CASE("graph_to_dot: no-grad results are leaves; an undefined tensor gives an empty graph") {
    Tensor x = leaf({4}, "x");
    Tensor y;
    {
        NoGradGuard no_grad;
        y = exp(x);
    }
    const DotGraph g = graph_to_dot(y);
    CHECK(g.nodes == 1);
    CHECK(g.edges == 0);
    CHECK(graph_to_dot(Tensor()).nodes == 0);
}

TEST_CASE("graph_to_dot: one RoPE attention layer — x fans out to q, k, v and the residual") {
    const DotGraph g = attention_layer_graph(false);  // the composed ops (fused: next test)
    const std::string ix = node_id(g.dot, "x\\\\n\\[1, 5, 16\\]");
    CHECK(count(g.dot, ix + " -> ") == 4);  // query, key, value, residual add
    CHECK(g.fan_out_edges >= 4);
    CHECK(count(g.dot, "label=\"rope\\n[1, 2, 5, 8]\"") == 2);  // q and k rotated, v not
    CHECK(count(g.dot, "label=\"softmax\\n[1, 2, 5, 5]\"") == 1);
    CHECK(count(g.dot, "label=\"linear\\n") == 4);
    CHECK(g.dot.find("roformer.encoder.layer.0.attention.self.query.weight\\n[16, 16]") !=
          std::string::npos);
    CHECK(count(g.dot, " -> ") == g.edges);
}

TEST_CASE("graph_to_dot: with model.fused the attention's middle is one fused_attention node") {
    const DotGraph g = attention_layer_graph(true);
    CHECK(count(g.dot, "label=\"fused_attention\\n[1, 5, 16]\"") == 1);
    CHECK(count(g.dot, "label=\"rope\\n") == 0);
    CHECK(count(g.dot, "label=\"softmax\\n") == 0);
    // q, k, v as one stacked product [1,5,48] (read in place by fused_attention), then output
    CHECK(count(g.dot, "label=\"stacked_linear\\n[1, 5, 48]\"") == 1);
    CHECK(count(g.dot, "label=\"linear\\n") == 1);
    const std::string ix = node_id(g.dot, "x\\\\n\\[1, 5, 16\\]");
    CHECK(count(g.dot, ix + " -> ") == 2);  // x fans out to the stacked q, k, v and the residual
}
