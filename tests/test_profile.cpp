// The op profiler (src/tensor/profile.hpp, `roformer train --profile`): off, it records
// nothing; on, every op of a forward gets a forward call and every node of the backward a
// backward call, under the op's name.
#include <doctest/doctest.h>

#include <string>

#include "ops/ops.hpp"
#include "tensor/profile.hpp"

using namespace rf;

namespace {
const profile::Row* find_row(const std::vector<profile::Row>& rows, const std::string& name) {
    for (const profile::Row& r : rows)
        if (r.name == name) return &r;
    return nullptr;
}

Tensor small_graph() {  // sum(gelu(a·b)): three ops
    Tensor a = Tensor::full({4, 3}, Real(0.5), true), b = Tensor::full({3, 2}, Real(0.25), true);
    return sum(gelu(matmul(a, b)));
}
}  // namespace

TEST_CASE("profile: off records nothing; on times each op's forward and backward once") {
    profile::reset();
    small_graph().backward();
    CHECK(profile::rows().empty());

    profile::enable(true);
    Tensor y = small_graph();
    y.backward();
    profile::enable(false);
    const std::vector<profile::Row> rows = profile::rows();
    for (const char* op : {"matmul", "gelu", "sum"}) {
        CAPTURE(op);
        const profile::Row* r = find_row(rows, op);
        REQUIRE(r != nullptr);
        CHECK(r->forward_calls == 1);
        CHECK(r->backward_calls == 1);
        CHECK(r->forward_s >= 0.0);
        CHECK(r->backward_s >= 0.0);
    }
    REQUIRE(find_row(rows, "graph: sort") != nullptr);
    CHECK(find_row(rows, "graph: sort")->backward_calls == 1);
    const std::string table = profile::report(1, 1.0);
    CHECK(table.find("matmul") != std::string::npos);
    CHECK(table.find("(not in a row)") != std::string::npos);

    small_graph().backward();  // off again: the counts stay
    CHECK(find_row(profile::rows(), "matmul")->forward_calls == 1);
    profile::reset();
    CHECK(profile::rows().empty());
}
