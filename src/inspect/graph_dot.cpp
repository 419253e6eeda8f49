// Room — inspect: the autograd graph as Graphviz DOT (see graph_dot.hpp).
#include "inspect/graph_dot.hpp"

#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rf {

namespace {

std::string escaped(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// Every tensor reachable from root, parents before children (iterative depth-first search,
// as topological_order in tensor.cpp, but through every parent, with or without grad).
std::vector<TensorImpl*> reachable(TensorImpl* root) {
    std::vector<TensorImpl*> order;
    std::unordered_map<TensorImpl*, bool> seen;
    std::vector<std::pair<TensorImpl*, size_t>> stack{{root, 0}};
    seen[root] = true;
    while (!stack.empty()) {
        auto& [t, next] = stack.back();
        const size_t parents = t->node ? t->node->parents.size() : 0;
        if (next < parents) {
            TensorImpl* p = t->node->parents[next++].impl();
            if (p && !seen[p]) {
                seen[p] = true;
                stack.push_back({p, 0});
            }
        } else {
            order.push_back(t);
            stack.pop_back();
        }
    }
    return order;
}

}  // namespace

DotGraph graph_to_dot(const Tensor& root, const std::string& title) {
    DotGraph g;
    if (!root.defined()) return g;
    const std::vector<TensorImpl*> order = reachable(root.impl());
    std::unordered_map<TensorImpl*, size_t> id, uses;
    for (TensorImpl* t : order) {
        id[t] = id.size();
        if (t->node)
            for (const Tensor& p : t->node->parents)
                if (p.impl()) ++uses[p.impl()];
    }

    std::ostringstream out;
    out << "digraph autograd {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", "
           "fontsize=10];\n  edge [arrowsize=0.6];\n";
    if (!title.empty()) out << "  label=\"" << escaped(title) << "\";\n  labelloc=t;\n";
    for (TensorImpl* t : order) {
        const std::string shape = shape_str(Shape(t->data.shape().begin(), t->data.shape().end()));
        out << "  t" << id[t] << " [label=\"";
        if (t->node) {
            out << escaped(t->node->op) << "\\n" << shape << "\"";
            ++g.op_nodes;
        } else {
            const std::string name =
                t->name.empty() ? (t->requires_grad ? "leaf" : "input") : t->name;
            out << escaped(name) << "\\n"
                << shape << "\", "
                << (t->requires_grad ? "style=filled, fillcolor=\"#cfe2ff\"" : "style=dashed");
            ++g.leaves;
        }
        if (uses[t] >= 2) out << ", color=red";
        if (t == root.impl()) out << ", peripheries=2";
        out << "];\n";
        ++g.nodes;
    }
    for (TensorImpl* t : order) {
        if (!t->node) continue;
        for (const Tensor& p : t->node->parents) {
            if (!p.impl()) continue;
            out << "  t" << id[p.impl()] << " -> t" << id[t];
            if (uses[p.impl()] >= 2) {
                out << " [color=red, penwidth=2.0]";
                ++g.fan_out_edges;
            }
            out << ";\n";
            ++g.edges;
        }
    }
    out << "}\n";
    g.dot = out.str();
    return g;
}

}  // namespace rf
