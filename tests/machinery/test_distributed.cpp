// Data-parallel training's arithmetic, without MPI (train/data_parallel.hpp): how a batch is
// split over ranks, and why the shards' gradients, weighted by their labelled positions, sum
// to the full batch's; and that every helper is the plain 1-process code on a SingleProcess
// (train/communicator.hpp). The MPI runs themselves are tested on the binary:
// tests/machinery/cli_distributed.sh.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "tiny_model.hpp"
#include "assembly/swappable_ops_for.hpp"
#include "train/data_parallel.hpp"

using namespace rf;

TEST_CASE("data parallel: shard rows are split contiguous, disjoint, complete, within one row") {
    for (size_t P = 1; P <= 8; ++P)
        for (size_t B = P; B <= 40; ++B) {
            size_t next = 0, most = 0, least = B;
            for (size_t r = 0; r < P; ++r) {
                const RowRange rows = shard_rows(B, r, P);
                CHECK(rows.first == next);  // contiguous, in rank order, no overlap
                CHECK(rows.count >= 1);
                CHECK(rows.count == B / P + (r < B % P ? 1 : 0));  // the first B % P get one more
                next += rows.count;
                most = std::max(most, rows.count);
                least = std::min(least, rows.count);
            }
            CHECK(next == B);  // every row is some rank's
            CHECK(most - least <= 1);
        }
}

namespace {

// The loss and every parameter's gradient of `model` on `batch` (no dropout).
std::vector<double> loss_and_gradients(RoFormer& model, const Batch& batch) {
    for (const NamedParameter& p : model.parameters()) {
        Tensor t = p.tensor;
        t.zero_grad();
    }
    ModelOutput out =
        model.forward(batch.input_ids, batch.labels, batch.batch, batch.seq_len, false);
    std::vector<double> result{double(out.loss.item())};
    out.loss.backward();
    for (const NamedParameter& p : model.parameters()) {
        Tensor t = p.tensor;
        const Real* g = t.grad().data();
        for (size_t i = 0; i < t.numel(); ++i) result.push_back(double(g[i]));
    }
    return result;
}

// Rank `rank` of `ranks`, in this one process, for the helpers' unit tests: allreduce_sum
// keeps what this rank sent (`sent`) and adds `partner`, the buffer another rank sent — so a
// test can run two ranks one after the other (rank 1 first, then rank 0 with rank 1's buffer),
// the sum each rank would get from MPI_Allreduce(SUM) of 2 ranks. Broadcasts change nothing
// (as on rank 0).
class RanksInOneProcess final : public Communicator {
public:
    RanksInOneProcess(size_t rank, size_t ranks) : rank_(rank), ranks_(ranks) {}
    size_t rank() const override { return rank_; }
    size_t size() const override { return ranks_; }
    size_t local_size() const override { return ranks_; }
    void allreduce_sum(float* values, size_t n) override {
        sent.assign(values, values + n);
        if (partner.empty()) return;
        REQUIRE(partner.size() == n);
        for (size_t i = 0; i < n; ++i) values[i] += partner[i];
    }
    void allreduce_sum(double*, size_t) override { FAIL("no double sum expected"); }
    int allreduce_max(int value) override { return value; }
    void broadcast_bytes(void*, size_t) override {}
    void barrier() override {}

    std::vector<float> sent, partner;

private:
    size_t rank_, ranks_;
};

// A batch of B rows of T positions with labels on an uneven share of positions (the first
// `dense_rows` rows every 2nd position, the rest every 5th).
Batch uneven_batch(size_t V, size_t B, size_t T, size_t dense_rows) {
    Batch batch;
    batch.batch = B;
    batch.seq_len = T;
    Rng rng(11);
    for (size_t i = 0; i < B * T; ++i) {
        batch.input_ids.push_back(int(5 + rng.next_u64() % (V - 5)));
        const bool labelled = i / T < dense_rows ? i % 2 == 0 : i % 5 == 0;
        batch.labels.push_back(labelled ? int(5 + rng.next_u64() % (V - 5)) : kIgnoreLabel);
    }
    return batch;
}

// Rank `comm.rank()`'s step up to the update: its shard's forward and backward, then the
// weighted all-reduce. Returns the global loss allreduce_gradients() reports.
double reduced_step(Communicator& comm, RoFormer& model, AdamW& optimizer,
                    const Batch& global) {
    const ShardedBatch s = shard(comm, global);
    optimizer.zero_grad();
    ModelOutput out =
        model.forward(s.local.input_ids, s.local.labels, s.local.batch, s.local.seq_len, false);
    const double loss = out.loss.item();
    out.loss.backward();
    return allreduce_gradients(comm, optimizer, loss, s.local.n_selected(), s.global_labels).loss;
}

}  // namespace

TEST_CASE("data parallel: shard gradients weighted by n_r / N are the full batch's; 1/P is not") {
    // 5 rows of 8 on 2 "ranks" (3 + 2 rows), labels on an uneven share of positions.
    const size_t V = 20, B = 5, T = 8;
    RoFormer model=
        assembled_model(testing::tiny_model_config(V), testing::tiny_position_config(), 7);
    // rows 0–2 (rank 0): every 2nd position labelled; rows 3–4 (rank 1): every 5th
    const Batch batch = uneven_batch(V, B, T, 3);
    const std::vector<double> full = loss_and_gradients(model, batch);
    const size_t N = batch.n_selected();
    std::vector<double> weighted(full.size(), 0.0), plain(full.size(), 0.0);
    size_t n_total = 0;
    for (size_t r = 0; r < 2; ++r) {
        const Batch shard = take_rows(batch, shard_rows(B, r, 2));
        const size_t n = shard.n_selected();
        n_total += n;
        const std::vector<double> part = loss_and_gradients(model, shard);
        for (size_t i = 0; i < full.size(); ++i) {
            weighted[i] += double(n) / double(N) * part[i];
            plain[i] += 0.5 * part[i];
        }
    }
    CHECK(n_total == N);
    // float32 sums in another order: agreement to a few roundoffs of the largest entry.
    double scale = 0, worst_weighted = 0, worst_plain = 0;
    for (size_t i = 0; i < full.size(); ++i) {
        scale = std::max(scale, std::abs(full[i]));
        worst_weighted = std::max(worst_weighted, std::abs(weighted[i] - full[i]));
        worst_plain = std::max(worst_plain, std::abs(plain[i] - full[i]));
    }
    CHECK(worst_weighted <= 1e-5 * scale);
    CHECK(worst_plain > 1e-2 * scale);  // the textbook 1/P average is another gradient here
}

TEST_CASE("distributed: the all-reduce of 2 ranks' weighted gradients gives the full batch's") {
    const size_t V = 20, B = 5, T = 8;
    RoFormer model=
        assembled_model(testing::tiny_model_config(V), testing::tiny_position_config(), 7);
    AdamW optimizer(model.parameters(), AdamWOptions{});
    const Batch batch = uneven_batch(V, B, T, 3);
    const std::vector<double> full = loss_and_gradients(model, batch);

    RanksInOneProcess rank1(1, 2), rank0(0, 2);
    reduced_step(rank1, model, optimizer, batch);
    rank0.partner = rank1.sent;
    const double loss = reduced_step(rank0, model, optimizer, batch);

    // The buffer's layout: [ gradients | one has-gradient flag per parameter | weighted loss ].
    const size_t params = model.parameters().size();
    REQUIRE(rank0.sent.size() == full.size() - 1 + params + 1);
    for (size_t i = 0; i < params; ++i) CHECK(rank0.sent[full.size() - 1 + i] == 1.0f);
    CHECK(loss == doctest::Approx(full[0]).epsilon(1e-5));
    std::vector<double> reduced{loss};
    for (const NamedParameter& p : model.parameters()) {
        Tensor t = p.tensor;
        const Real* g = t.grad().data();
        for (size_t i = 0; i < t.numel(); ++i) reduced.push_back(double(g[i]));
    }
    double scale = 0, worst = 0;
    for (size_t i = 1; i < full.size(); ++i) {
        scale = std::max(scale, std::abs(full[i]));
        worst = std::max(worst, std::abs(reduced[i] - full[i]));
    }
    CHECK(worst <= 1e-5 * scale);
}

TEST_CASE("distributed: on a SingleProcess every helper is the 1-process code") {
    SingleProcess alone;
    const Batch batch = uneven_batch(20, 3, 8, 1);
    const ShardedBatch s = shard(alone, batch);
    CHECK(s.local.input_ids == batch.input_ids);
    CHECK(s.local.labels == batch.labels);
    CHECK(s.global_labels == batch.n_selected());
    CHECK(dropout_seed(alone, 1234) == 1234);
    CHECK_NOTHROW(check_batch_rows(alone, 1));
    CHECK(threads_per_rank(alone, 0) == 0);  // "every core", as configured
    CHECK(threads_per_rank(alone, 3) == 3);
    CHECK(agree_on_stop(alone, 15) == 15);

    RoFormer model=
        assembled_model(testing::tiny_model_config(20), testing::tiny_position_config(), 7);
    AdamW optimizer(model.parameters(), AdamWOptions{});
    const std::vector<double> before = loss_and_gradients(model, batch);
    const ReducedGradients r = allreduce_gradients(alone, optimizer, 2.5, 7, 21);
    CHECK(r.loss == 2.5);  // not weighted by 7 / 21: one rank holds the whole batch
    std::vector<double> after{before[0]};
    for (const NamedParameter& p : model.parameters()) {
        Tensor t = p.tensor;
        for (size_t i = 0; i < t.numel(); ++i) after.push_back(double(t.grad().data()[i]));
    }
    CHECK(after == before);  // gradients untouched
}

TEST_CASE("distributed: each rank's shard, dropout stream and batch check") {
    const Batch batch = uneven_batch(20, 5, 8, 2);
    RanksInOneProcess r0(0, 3), r1(1, 3), r2(2, 3);
    size_t rows = 0;
    for (RanksInOneProcess* comm : {&r0, &r1, &r2}) {
        const ShardedBatch s = shard(*comm, batch);
        const RowRange range = shard_rows(5, comm->rank(), 3);
        CHECK(s.local.batch == range.count);
        CHECK(s.global_labels == batch.n_selected());  // N is the whole batch's
        CHECK(s.local.input_ids == take_rows(batch, range).input_ids);
        rows += s.local.batch;
    }
    CHECK(rows == 5);
    CHECK(dropout_seed(r0, 99) == 99);  // rank 0 keeps the 1-process stream
    CHECK(dropout_seed(r1, 99) != 99);
    CHECK(dropout_seed(r1, 99) != dropout_seed(r2, 99));
    CHECK_NOTHROW(check_batch_rows(r1, 3));
    CHECK_THROWS_AS(check_batch_rows(r1, 2), std::invalid_argument);
    CHECK(threads_per_rank(r1, 2) == 2);
    CHECK(threads_per_rank(r1, 0) >= 1);
}
