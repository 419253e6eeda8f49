// The op profiler (src/inspect/profile.hpp, `roformer train --profile`): off, it records
// nothing; on, every op of a forward gets a forward call and every node of the backward a
// backward call, under the op's name; the time between two ops is the later op's forward, and
// no time is counted twice.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include "ops/ops.hpp"
#include "inspect/profile.hpp"

using namespace rf;

namespace {
const profile::Row* find_row(const std::vector<profile::Row>& rows, const std::string& name) {
    for (const profile::Row& r : rows)
        if (r.name == name) return &r;
    return nullptr;
}

// sum(gelu(a·b)): three ops; `pause` is spent between matmul and gelu.
Tensor small_graph(std::chrono::milliseconds pause = std::chrono::milliseconds(0)) {
    Tensor a = Tensor::full({4, 3}, Real(0.5), true), b = Tensor::full({3, 2}, Real(0.25), true);
    Tensor product = matmul(a, b);
    std::this_thread::sleep_for(pause);
    return sum(gelu(product));
}
}  // namespace

TEST_CASE("profile: off records nothing; on times each op's forward and backward once") {
    profile::reset();
    small_graph().backward();
    CHECK(profile::rows().empty());

    const std::chrono::milliseconds pause(20);
    const double pause_s = std::chrono::duration<double>(pause).count();
    const auto start = std::chrono::steady_clock::now();
    profile::enable(true);
    Tensor y = small_graph(pause);
    y.backward();
    profile::enable(false);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::vector<profile::Row> rows = profile::rows();
    for (const char* op : {"matmul", "gelu", "sum"}) {
        CAPTURE(std::string(op));
        const profile::Row* r = find_row(rows, op);
        REQUIRE(r != nullptr);
        CHECK(r->forward_calls == 1);
        CHECK(r->backward_calls == 1);
    }
    // An op's forward is the time since the previous op: the pause is gelu's, in seconds.
    CHECK(find_row(rows, "gelu")->forward_s >= pause_s);
    // Every row times its own interval of the step: together they fit inside its wall time.
    double profiled = 0;
    for (const profile::Row& r : rows) profiled += r.forward_s + r.backward_s;
    CHECK(profiled >= pause_s);
    CHECK(profiled <= wall);
    REQUIRE(find_row(rows, "graph: record") != nullptr);
    const std::string table = profile::report(1, 1.0);
    CHECK(table.find("matmul") != std::string::npos);
    CHECK(table.find("(not in a row)") != std::string::npos);

    small_graph().backward();  // off again: the counts stay
    CHECK(find_row(profile::rows(), "matmul")->forward_calls == 1);
    profile::reset();
    CHECK(profile::rows().empty());
}
