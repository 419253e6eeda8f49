// Room — dist: the MPI job under data-parallel training — MPI's start and end, the
// processes in it, the Communicator over them that train() uses, the world-level collectives
// of sweeps (see mpi_communicator.hpp).
#include "dist/mpi_communicator.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#ifdef RF_HAVE_MPI
#include <mpi.h>
#endif

namespace rf::dist {

namespace {

size_t env_size(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return 0;
    char* end = nullptr;
    const unsigned long n = std::strtoul(v, &end, 10);
    return (end && *end == '\0') ? size_t(n) : 0;
}

#ifdef RF_HAVE_MPI
bool g_mpi = false;  // MPI_Init ran (a launcher started us)

void finish() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (g_mpi && !finalized) MPI_Finalize();
}
#endif

}  // namespace

#ifdef RF_HAVE_MPI
namespace {

// An MPI call that failed: the job cannot go on (MPI's default handler aborts already; this
// names the call if a handler returned instead).
void check(int rc, const char* what) {
    if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

// MPI_Bcast of `bytes` bytes from rank 0 of `comm`.
void bcast_bytes(void* data, size_t bytes, MPI_Comm comm) {
    char* p = static_cast<char*>(data);
    while (bytes > 0) {  // counts are int: large buffers in pieces of at most 1 GiB
        const int n = int(std::min<size_t>(bytes, size_t(1) << 30));
        check(MPI_Bcast(p, n, MPI_BYTE, 0, comm), "MPI_Bcast");
        p += n;
        bytes -= size_t(n);
    }
}

// Counts are int: a buffer beyond 2^31 − 1 values (a model far beyond this project's) would
// need pieces.
int count_of(size_t n) {
    if (n > size_t(INT_MAX))
        throw std::runtime_error("MPI_Allreduce: a buffer of " + std::to_string(n) +
                                 " values exceeds 2^31 - 1");
    return int(n);
}

// The Communicator over an MPI communicator (every rank of the job: MPI_COMM_WORLD).
class MpiCommunicator final : public Communicator {
public:
    MpiCommunicator(MPI_Comm comm, size_t local_size) : comm_(comm) {
        int r = 0, s = 1;
        MPI_Comm_rank(comm, &r);
        MPI_Comm_size(comm, &s);
        rank_ = size_t(r);
        size_ = size_t(s);
        local_size_ = local_size ? local_size : size_;
    }
    size_t rank() const override { return rank_; }
    size_t size() const override { return size_; }
    size_t local_size() const override { return local_size_; }
    void allreduce_sum(float* values, size_t n) override {
        check(MPI_Allreduce(MPI_IN_PLACE, values, count_of(n), MPI_FLOAT, MPI_SUM, comm_),
              "MPI_Allreduce (sum)");
    }
    void allreduce_sum(double* values, size_t n) override {
        check(MPI_Allreduce(MPI_IN_PLACE, values, count_of(n), MPI_DOUBLE, MPI_SUM, comm_),
              "MPI_Allreduce (sum)");
    }
    int allreduce_max(int value) override {
        check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, comm_),
              "MPI_Allreduce (max)");
        return value;
    }
    void broadcast_bytes(void* data, size_t bytes) override { bcast_bytes(data, bytes, comm_); }
    void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }

private:
    MPI_Comm comm_;
    size_t rank_ = 0, size_ = 1, local_size_ = 1;
};

}  // namespace
#endif

bool under_launcher() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"})
        if (std::getenv(name) != nullptr) return true;
    return false;
}

size_t launched_size() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
        if (const size_t n = env_size(name)) return n;
    // srun --mpi=pmix sets PMIX_RANK but no size; the step's task count is Slurm's.
    if (std::getenv("PMIX_RANK") != nullptr)
        if (const size_t n = env_size("SLURM_STEP_NUM_TASKS")) return n;
    return 1;
}

bool built_with_mpi() {
#ifdef RF_HAVE_MPI
    return true;
#else
    return false;
#endif
}

std::string start(int* argc, char*** argv) {
    const size_t launched = launched_size();
#ifdef RF_HAVE_MPI
    if (under_launcher()) {
        int provided = 0;
        // FUNNELED: only the main thread calls MPI (OpenMP and OpenBLAS threads never do).
        if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return "MPI_Init failed under a launcher of " + std::to_string(launched) +
                   " processes; check the mpirun / srun line (docs/distributed.md)";
        g_mpi = true;
        std::atexit(finish);
    }
    return "";
#else
    (void)argc;
    (void)argv;
    if (launched > 1)
        return "this roformer was built without MPI but started as one of " +
               std::to_string(launched) +
               " processes (it would train that many separate copies); install "
               "libopenmpi-dev (scripts/setup.sh), rebuild, and launch again";
    return "";
#endif
}

void abort_job(int code) {
#ifdef RF_HAVE_MPI
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (g_mpi && !finalized && world_size() > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
    (void)code;
}

size_t world_rank() {
#ifdef RF_HAVE_MPI
    if (!g_mpi) return 0;
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return size_t(r);
#else
    return 0;
#endif
}

size_t world_size() {
#ifdef RF_HAVE_MPI
    if (!g_mpi) return 1;
    int s = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return size_t(s);
#else
    return 1;
#endif
}

std::unique_ptr<Communicator> world_communicator() {
#ifdef RF_HAVE_MPI
    if (g_mpi && world_size() > 1) {  // (one rank: no MPI call in the training loop)
        size_t local = env_size("OMPI_COMM_WORLD_LOCAL_SIZE");
        if (!local) local = env_size("SLURM_NTASKS_PER_NODE");
        return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, local);
    }
#endif
    return std::make_unique<SingleProcess>();
}

void broadcast_world(std::string& text) {
#ifdef RF_HAVE_MPI
    if (world_size() == 1) return;
    uint64_t n = text.size();
    bcast_bytes(&n, sizeof n, MPI_COMM_WORLD);
    text.resize(size_t(n));
    bcast_bytes(text.data(), size_t(n), MPI_COMM_WORLD);
#else
    (void)text;
#endif
}

std::vector<std::string> gather_world(const std::string& text) {
#ifdef RF_HAVE_MPI
    if (world_size() == 1) return {text};
    const int P = int(world_size());
    int n = int(text.size());
    std::vector<int> counts(static_cast<size_t>(P)), offsets(static_cast<size_t>(P));
    check(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
    std::string all;
    if (world_rank() == 0) {
        int total = 0;
        for (int r = 0; r < P; ++r) {
            offsets[size_t(r)] = total;
            total += counts[size_t(r)];
        }
        all.resize(size_t(total));
    }
    check(MPI_Gatherv(text.data(), n, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR,
                      0, MPI_COMM_WORLD),
          "MPI_Gatherv");
    std::vector<std::string> out;
    if (world_rank() == 0)
        for (int r = 0; r < P; ++r)
            out.push_back(all.substr(size_t(offsets[size_t(r)]), size_t(counts[size_t(r)])));
    return out;
#else
    return {text};
#endif
}

}  // namespace rf::dist
