// Room — train: the ranks that train one model together, as the loop sees them
// (docs/distributed.md).
//
//   P ranks (processes), numbered 0 … P−1; rank 0 is the root that owns the run directory
//   allreduce_sum(x, n):  x ← Σ_r x_r on every rank (element-wise, n values)
//   allreduce_max(v):     max_r v_r on every rank
//   broadcast_bytes(p, n): rank 0's n bytes at p, on every rank
//
// The loop (train/trainer.cpp) and its data-parallel helpers (train/data_parallel.hpp) are
// written against this interface and nothing else; how the bytes travel is a room of its own
// (dist/mpi_communicator.hpp: MPI). A 1-process run is a SingleProcess: rank 0 of 1, every
// collective the identity — so the loop has one code path for P = 1 and P > 1.
// Every collective must be called by every rank, in the same order (MPI's rule, and the only
// way a rank knows which of the others' values belong together).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/real.hpp"

namespace rf {

class Communicator {
public:
    virtual ~Communicator() = default;

    virtual size_t rank() const = 0;
    virtual size_t size() const = 0;
    // How many of the ranks share this machine (and its cores); 1 for a process alone.
    virtual size_t local_size() const = 0;
    bool is_root() const { return rank() == 0; }

    // x ← Σ over the ranks, element-wise, in place.
    virtual void allreduce_sum(float* values, size_t n) = 0;
    virtual void allreduce_sum(double* values, size_t n) = 0;
    // The largest `value` of any rank.
    virtual int allreduce_max(int value) = 0;
    // Rank 0's `bytes` bytes at `data`, written over `data` on every other rank.
    virtual void broadcast_bytes(void* data, size_t bytes) = 0;
    // Returns when every rank has called it.
    virtual void barrier() = 0;

    // Rank 0's value on every rank (built on broadcast_bytes: first the size, then the data).
    size_t broadcast(size_t value) {
        uint64_t v = value;  // the same width on every rank
        broadcast_bytes(&v, sizeof v);
        return size_t(v);
    }
    void broadcast(std::string& text) {
        text.resize(broadcast(text.size()));
        broadcast_bytes(text.data(), text.size());
    }
    void broadcast(std::vector<Real>& values) {
        values.resize(broadcast(values.size()));
        broadcast_bytes(values.data(), values.size() * sizeof(Real));
    }
};

// One process training alone: rank 0 of 1; every collective leaves its arguments as they are
// (a sum or maximum over one rank, a broadcast from oneself).
class SingleProcess final : public Communicator {
public:
    size_t rank() const override { return 0; }
    size_t size() const override { return 1; }
    size_t local_size() const override { return 1; }
    void allreduce_sum(float*, size_t) override {}
    void allreduce_sum(double*, size_t) override {}
    int allreduce_max(int value) override { return value; }
    void broadcast_bytes(void*, size_t) override {}
    void barrier() override {}
};

}  // namespace rf
