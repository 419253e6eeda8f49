// Data-parallel training's arithmetic, without MPI (train/distributed.hpp): how a batch is
// split over ranks, and why the shards' gradients, weighted by their labelled positions, sum
// to the full batch's. The MPI runs themselves are tested on the binary: tests/cli_distributed.sh.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tiny_model.hpp"
#include "train/distributed.hpp"

using namespace rf;

TEST_CASE("data parallel: rows are split contiguous, disjoint, complete, within one row") {
    for (size_t P = 1; P <= 8; ++P)
        for (size_t B = P; B <= 40; ++B) {
            size_t next = 0, most = 0, least = B;
            for (size_t r = 0; r < P; ++r) {
                const dist::RowRange rows = dist::shard_rows(B, r, P);
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
std::vector<double> loss_and_gradients(RoFormer& model, const data::Batch& batch) {
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

}  // namespace

TEST_CASE("data parallel: shard gradients weighted by n_r / N are the full batch's; 1/P is not") {
    // 5 rows of 8 on 2 "ranks" (3 + 2 rows), labels on an uneven share of positions.
    const size_t V = 20, B = 5, T = 8;
    RoFormer model(testing::tiny_model_config(V), testing::tiny_position_config(), 7);
    data::Batch batch;
    batch.batch = B;
    batch.seq_len = T;
    Rng rng(11);
    for (size_t i = 0; i < B * T; ++i) {
        batch.input_ids.push_back(int(5 + rng.next_u64() % (V - 5)));
        // rows 0–2 (rank 0): every 2nd position labelled; rows 3–4 (rank 1): every 5th
        const bool labelled = i / T < 3 ? i % 2 == 0 : i % 5 == 0;
        batch.labels.push_back(labelled ? int(5 + rng.next_u64() % (V - 5)) : data::kIgnoreLabel);
    }
    const std::vector<double> full = loss_and_gradients(model, batch);
    const size_t N = batch.n_selected();
    std::vector<double> weighted(full.size(), 0.0), plain(full.size(), 0.0);
    size_t n_total = 0;
    for (size_t r = 0; r < 2; ++r) {
        const data::Batch shard = dist::take_rows(batch, dist::shard_rows(B, r, 2));
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
