// Benchmark: the gradient all-reduce alone (docs/performance.md, "Data-parallel training, measured").
//
//   mpirun -np P build/tests/bench_allreduce [N ...]
//
// One MPI_Allreduce(SUM) of N float32s in place — what a data-parallel step sends — timed after
// a barrier, so the number is the transport's cost and not a wait for a slower rank. Defaults:
// the classroom (671 824) and bench (1 074 560) models' parameter counts. Each line: the median
// of 30 calls (after 5 warm-up calls), and the bytes a ring all-reduce moves per rank,
// 2(P−1)/P · 4N, divided by that time. Run it on an otherwise idle machine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifdef RF_HAVE_MPI
#include <mpi.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, P = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    std::vector<size_t> sizes;
    for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
    if (sizes.empty()) sizes = {671824, 1074560};
    if (rank == 0) std::printf("P = %d\n%12s %12s %14s\n", P, "floats", "ms / call", "ring GB/s");
    for (size_t n : sizes) {
        std::vector<float> buffer(n, 1.0f);
        std::vector<double> ms;
        for (int it = 0; it < 35; ++it) {
            MPI_Barrier(MPI_COMM_WORLD);
            const auto t0 = std::chrono::steady_clock::now();
            MPI_Allreduce(MPI_IN_PLACE, buffer.data(), int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            const double t =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
            double slowest = 0;  // a call ends when its slowest rank is done
            MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (it >= 5) ms.push_back(slowest);
        }
        std::sort(ms.begin(), ms.end());
        const double median = ms[ms.size() / 2];
        const double bytes = 2.0 * (P - 1) / P * 4.0 * double(n);
        if (rank == 0) std::printf("%12zu %12.3f %14.2f\n", n, median, bytes / (median * 1e6));
    }
    MPI_Finalize();
    return 0;
}
#else
int main() {
    std::printf("bench_allreduce: built without MPI (install libopenmpi-dev, reconfigure)\n");
    return 0;
}
#endif
