// Room — config: memory estimates of evaluation and of linear attention's feature maps
// (see memory_estimate.hpp).
#include "config/memory_estimate.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "fast/openmp.hpp"
#include "io/platform.hpp"
#include "model/attention.hpp"
#include "tensor/format.hpp"

namespace rf {

namespace {

std::string gib(double bytes) { return format_fixed(bytes / double(1ull << 30), 1) + " GiB"; }

}  // namespace

double feature_map_bytes(const Config& c, double batch, double length) {
    const double F = double(attention_feature_size(c.model));
    return 4.0 * double(c.model.num_layers) * 8 * batch * double(c.model.num_heads) * length * F;
}

double evaluation_bytes(const Config& c, double batch, double length) {
    const double V = double(c.model.vocab_size ? c.model.vocab_size : c.data.vocab_size);
    const double C = double(c.model.hidden), F = double(c.model.ffn);
    const double L = double(c.model.num_layers), H = double(c.model.num_heads);
    const double P = double(c.position.max_positions);
    const double E = double(embedding_width(c.model));
    const double params = (V + double(c.model.type_vocab_size)) * E + P * C + E * C +
                          L * (4 * (C * C + C) + 2 * C * F + F + 5 * C) + C * E + V;
    // The scores of one layer, B·H·T² (issue 23's probe reported eval --seq-len 16384 of a
    // configs/tiny.toml run, 4 windows of 2 heads, at 8.5 GB ≈ 4·2·16384²·4 bytes); the
    // composed path keeps the probabilities beside them.
    const double scores = attention_score_copies(c.fast) * batch * H * length * length;
    const double one_layer = batch * length * (16 * C + 3 * F) + scores;
    const double logits = 2 * batch * length * V;
    return 4.0 * (params + one_layer + logits) + feature_map_bytes(c, batch, length) / L;
}

double corpus_memory_bytes(const Config& c) {
    struct stat st {};
    if (c.data.path.empty() || ::stat(c.data.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    return kCorpusMemoryPerByte * double(st.st_size);
}

double machine_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
}

double memory_budget_bytes() { return 0.8 * machine_memory_bytes(); }

// ---- address space --------------------------------------------------------------------------
double address_space_limit_bytes() {
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
    return double(limit.rlim_cur);
}

double address_space_mapped_bytes() { return platform::mapped_bytes(); }

double allocation_budget_bytes() {
    double budget = memory_budget_bytes();
    if (const double limit = address_space_limit_bytes(); limit > 0) {
        const double left =
            std::max(1.0, limit - address_space_mapped_bytes() - kAddressSpaceSlackBytes);
        budget = budget > 0 ? std::min(budget, left) : left;
    }
    return budget;
}

double worker_thread_bytes() {
    constexpr double kArena = 64.0 * (1 << 20);  // glibc: HEAP_MAX_SIZE on 64-bit
    rlimit stack{};
    const double stack_bytes =
        getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY
            ? double(stack.rlim_cur)
            : 8.0 * (1 << 20);
    return kArena + stack_bytes;
}

size_t threads_within_address_space(size_t wanted) {
    const double limit = address_space_limit_bytes();
    if (limit <= 0 || wanted <= 1) return wanted;
    const double left = limit - address_space_mapped_bytes() - kAddressSpaceSlackBytes;
    const double extra = std::floor(std::max(0.0, left) / worker_thread_bytes());
    return extra + 1 >= double(wanted) ? wanted : size_t(extra) + 1;
}

double training_address_space_bytes(double training_bytes, size_t threads) {
    const double t = double(std::max<size_t>(1, threads));
    return training_bytes + t * kOpenBlasBufferBytes + (t - 1) * worker_thread_bytes() +
           kAddressSpaceSlackBytes;
}

size_t configured_threads(const Config& c) {
    if (!kOpenMP) return 1;  // a build without OpenMP runs on one thread (fast/openmp.hpp)
    return c.train.threads ? c.train.threads : std::max(1u, std::thread::hardware_concurrency());
}

namespace {
std::string mib(double bytes) { return format_fixed(bytes / double(1 << 20), 0) + " MiB"; }
// "51 MiB to train, 1 × 128 MiB of OpenBLAS buffers for train.threads = 1"
std::string address_space_parts(double bytes, const char* to, size_t threads) {
    return mib(bytes) + " " + to + ", " + std::to_string(threads) + " × " +
           mib(kOpenBlasBufferBytes) + " of OpenBLAS buffers for train.threads = " +
           std::to_string(threads) +
           (threads > 1 ? " and each extra thread's stack and malloc arena" : "");
}
}  // namespace

void check_products_address_space(const Config& config, size_t threads) {
    threads = std::max<size_t>(1, threads);
    const double need =
        evaluation_bytes(config, double(config.train.batch_size), double(config.data.seq_len)) +
        corpus_memory_bytes(config);
    check_address_space(training_address_space_bytes(need, threads), "roformer",
                        address_space_parts(need, "for the model, its data and a forward",
                                            threads),
                        threads > 1 ? "use fewer threads (train.threads)" : "");
}

void check_training_address_space(const Config& config, size_t threads) {
    const double need = estimated_training_bytes(config) + corpus_memory_bytes(config);
    check_address_space(training_address_space_bytes(need, threads), "this config",
                        address_space_parts(need, "to train", threads),
                        "make train.threads, the model or train.batch_size × data.seq_len "
                        "smaller");
}

void check_address_space(double need, const std::string& what, const std::string& parts,
                         const std::string& fix) {
    const double limit = address_space_limit_bytes();
    if (limit <= 0) return;
    const double mapped = address_space_mapped_bytes();
    if (mapped + need <= limit) return;
    const double kib = std::ceil((mapped + need) / 1024 / 1000) * 1000;  // ulimit -v's unit
    throw std::invalid_argument(what + " needs about " + mib(mapped + need) +
                                " of address space (" + parts + ", beside the " + mib(mapped) +
                                " the program and its libraries map) but ulimit -v allows " +
                                mib(limit) + "; raise it to at least ulimit -v " +
                                format_fixed(kib, 0) + (fix.empty() ? "" : ", or " + fix));
}

// ---- roformer attention ---------------------------------------------------------------------
namespace {
// Bytes per selected weight each output holds beside the float32 maps: the text or array
// image of the file, its buffer's growth and the copy handed to the writer. Measured as the
// peak RSS over CSV-on-stdout's per weight, at two text lengths (docs/performance.md, "Memory
// of the edges": .npy 2.4, CSV 18, JSON 37); each constant is at least that and at least
// what the format holds by construction (.npy: the 4-byte image and its copy).
double output_bytes_per_weight(AttentionOutput output) {
    switch (output) {
        case AttentionOutput::csv_stdout: return 0;  // streamed row by row
        case AttentionOutput::npy: return 8;         // float32 image + the string copy
        case AttentionOutput::csv_file: return 24;   // ",0.0123457" text, grown, copied
        case AttentionOutput::json: return 48;       // json numbers (16 B) + their text
    }
    return 48;
}
const char* output_name(AttentionOutput output) {
    switch (output) {
        case AttentionOutput::csv_stdout: return "CSV on stdout";
        case AttentionOutput::npy: return ".npy";
        case AttentionOutput::csv_file: return ".csv";
        case AttentionOutput::json: return ".json";
    }
    return "";
}
bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

AttentionOutput attention_output_of(const std::string& out) {
    if (out.empty()) return AttentionOutput::csv_stdout;
    if (ends_with(out, ".npy")) return AttentionOutput::npy;
    if (ends_with(out, ".json")) return AttentionOutput::json;
    return AttentionOutput::csv_file;
}

double attention_bytes(const Config& c, double length, double selected_maps,
                       AttentionOutput output) {
    const double L = double(c.model.num_layers), H = double(c.model.num_heads);
    const double T2 = length * length;
    return evaluation_bytes(c, 1, length) + 4.0 * (L + 2) * H * T2 +
           output_bytes_per_weight(output) * selected_maps * T2;
}

void check_attention_memory(const Config& config, size_t length, size_t selected_maps,
                            AttentionOutput output, double budget) {
    const auto need = [&](size_t T) {
        return attention_bytes(config, double(T), double(selected_maps), output);
    };
    if (budget <= 0 || need(length) <= budget) return;
    size_t fits = 0, over = length;  // need(fits) ≤ budget < need(over): bisect
    while (over - fits > 1) {
        const size_t mid = fits + (over - fits) / 2;
        (need(mid) <= budget ? fits : over) = mid;
    }
    throw std::invalid_argument(
        "attention maps of " + std::to_string(length) + " tokens need about " + gib(need(length)) +
        " (" + std::to_string(config.model.num_layers) + " layers × " +
        std::to_string(config.model.num_heads) + " heads × T² weights, " + output_name(output) +
        ") but the limit is " + gib(budget) +
        " (80 % of this machine's memory); the longest text that fits is " +
        std::to_string(fits) + " tokens — shorten the text" +
        (output == AttentionOutput::csv_stdout ? "" : ", or write .npy or CSV to stdout"));
}

void check_evaluation_memory(const Config& config, size_t batch, size_t length,
                             const std::string& what, const std::string& fix) {
    const double need = evaluation_bytes(config, double(batch), double(length));
    const double have = machine_memory_bytes();
    if (have > 0 && need > 0.8 * have)
        throw std::invalid_argument(what + " needs about " + gib(need) + " (" +
                                    std::to_string(batch) + " window(s) of " +
                                    std::to_string(length) +
                                    " tokens: T² attention scores per head) but this machine has " +
                                    gib(have) + " of memory; " + fix);
    const size_t threads = configured_threads(config);
    check_address_space(training_address_space_bytes(need, threads), what,
                        address_space_parts(need, "for the forward", threads),
                        fix);
}

}  // namespace rf
