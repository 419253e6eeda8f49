// Room — inspect: tools that watch the engine: the autograd graph behind a tensor, as Graphviz DOT.
//
// Everything reachable from `root` through Node::parents (what Tensor::backward() walks),
// one DOT node per tensor, one edge per (parent, op) use, drawn in the forward direction:
//   op result   box "op\n[shape]"            (Node::op; the root gets a double border)
//   parameter   filled box "name\n[shape]"   (a leaf that requires grad; its name if it has one)
//   constant    dashed box "input\n[shape]"  (a leaf without grad: data, masks, fixed tables)
//   fan-out     a tensor used by two or more ops — or twice by one, as in x·x — has every
//               outgoing edge drawn bold red: backward must ADD those contributions
//               (docs/autograd.md; "engine: fan-out y = x*x gives dy/dx = 2x")
// Render with Debian's graphviz: `dot -Tpng graph.dot -o graph.png`.
#pragma once

#include <cstddef>
#include <string>

#include "tensor/tensor.hpp"

namespace rf {

struct DotGraph {
    std::string dot;           // the whole "digraph autograd { … }"
    size_t nodes = 0;          // tensors drawn
    size_t op_nodes = 0;       // of those, results of an op
    size_t leaves = 0;         // parameters and constants
    size_t edges = 0;          // parent → result uses
    size_t fan_out_edges = 0;  // edges leaving a tensor with two or more uses
};

// `title` becomes the graph's label (empty: none).
DotGraph graph_to_dot(const Tensor& root, const std::string& title = "");

}  // namespace rf
