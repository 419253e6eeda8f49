// Room — config: how much memory a size the user chose will take, checked before anything
// is allocated (issue 23: every size a user can set, and the refusal names the option).
//
// Training's estimate is validate_limits's (config/limits.cpp). This file adds the sizes that
// come from a command line rather than the config — eval's and extrapolate's window lengths,
// generate's window — and the part of a step that grows with FAVOR's model.random_features.
// The estimates are rough upper bounds in float32 bytes, computed in double so that absurd
// sizes cannot overflow; a size is refused when it needs more than 80 % of the machine.
#pragma once

#include <cstddef>
#include <string>

#include "config/config.hpp"

namespace rf {

// Bytes of the linear-attention feature maps a training step keeps per layer (φ(q), φ(k),
// their rotated copies, FAVOR's projections and exponentials: ~8 tensors [B,H,T,F], F =
// model.random_features for favor, D for elu1), times the layers.
double feature_map_bytes(const Config& config, double batch, double length);

// Bytes one evaluation forward (no gradients) needs at `batch` windows of `length` tokens:
// the weights, one layer's activations and attention scores (B·H·T²; twice without
// model.fused), the head's logits.
double evaluation_bytes(const Config& config, double batch, double length);

// Memory per byte of data.path while it is split and tokenized and its ids are sampled: the
// text and its two splits, then 4-byte ids, at most one per byte (a token covers at least one
// byte). Measured as peak RSS over file size (docs/performance.md, "Memory of the edges":
// 6.9 for the char tokenizer on ASCII text, one token per byte, 4.0 for bpe).
inline constexpr double kCorpusMemoryPerByte = 7.0;

// kCorpusMemoryPerByte × the size of data.path (0 when it cannot be stat'ed: the reader then
// names the problem). Part of training's estimate (config/limits.cpp), so a corpus that would
// not fit is refused before a byte of it is read.
double corpus_memory_bytes(const Config& config);

// The machine's physical memory in bytes (0 when unknown).
double machine_memory_bytes();
// What a size may use: 80 % of the machine's memory (0 when unknown: nothing is refused).
double memory_budget_bytes();

// ---- address space (ulimit -v) --------------------------------------------------------------
// A limit on the address space (ulimit -v, RLIMIT_AS) counts what is mapped, not what is used:
// the libraries' code, every thread's stack and malloc arena, and OpenBLAS's buffer. Under one
// too small, malloc fails (bad_alloc, a clean error) — but OpenBLAS's buffer allocator retries
// for ever, so a product spins without end (issue 57). What a command maps is therefore
// checked against the limit before the work.

// The soft RLIMIT_AS in bytes (ulimit -v × 1024), 0 when there is none.
double address_space_limit_bytes();
// What this process has mapped now (VmSize: code, libraries, heap, threads), 0 when unknown.
double address_space_mapped_bytes();
// Bytes a command may still allocate: 80 % of the machine's memory, or less when ulimit -v
// leaves less beside what is mapped and kAddressSpaceSlackBytes (0 when neither is known:
// nothing is refused).
double allocation_budget_bytes();

// OpenBLAS maps one buffer on the first product of every thread that calls it: BUFFER_SIZE =
// 128 MiB on x86-64 (measured: one 128 MiB mapping per training thread, on Debian's 0.3.21).
inline constexpr double kOpenBlasBufferBytes = 128.0 * (1 << 20);
// Each worker thread beyond the first also maps a malloc arena (64 MiB reserved) and its
// stack (ulimit -s, 8 MiB by default).
double worker_thread_bytes();
// The OpenMP threads that fit under ulimit -v beside what is mapped now: `wanted`, or fewer (at
// least 1) when the workers' stacks and arenas (worker_thread_bytes each) and the slack would
// not fit; `wanted` when there is no limit. libgomp starts its workers at the first parallel
// loop and ends the process if one's stack cannot be mapped ("Thread creation failed", exit 1,
// no line of ours): the roformer binary runs on these before any command (src/cli/main.cpp).
size_t threads_within_address_space(size_t wanted);
// The rest a training maps beyond its estimate and the buffers (oneDNN's generated code, the
// heap's slack): measured with configs/tiny.toml, the smallest ulimit -v that trains is within
// this margin of the estimate (docs/training.md, "What every command guarantees").
inline constexpr double kAddressSpaceSlackBytes = 16.0 * (1 << 20);

// Address space a training needs beyond what is mapped now: `training_bytes` (its estimate),
// an OpenBLAS buffer per thread and the workers' arenas and stacks, and the slack. (An
// evaluation needs the same around its own estimate.)
double training_address_space_bytes(double training_bytes, size_t threads);

// Rough bytes a training step needs: parameters, gradients, AdamW's moments and one step's
// activations (config/limits.cpp, where validate_limits holds it against the machine).
double estimated_training_bytes(const Config& config);

// The threads a command computes on: train.threads, or every core when it is 0.
size_t configured_threads(const Config& config);

// Throws std::invalid_argument, one line, when `need` more bytes do not fit under ulimit -v
// beside what is mapped now: "<what> needs about X of address space (<parts>) but ulimit -v
// allows Y, Z of it already mapped …; raise ulimit -v to at least N, or <fix>".
void check_address_space(double need, const std::string& what, const std::string& parts,
                         const std::string& fix);

// check_address_space for a command that reads `config`'s data and runs its model: one
// evaluation forward of train.batch_size windows of data.seq_len tokens, the corpus, an
// OpenBLAS buffer per thread, the workers' stacks and arenas. run/threads.cpp's
// apply_threading calls it before any command's first product, so none spins under a
// ulimit -v too small for them.
void check_products_address_space(const Config& config, size_t threads);

// check_address_space for training `config` on `threads` threads (its estimate, the corpus,
// the OpenBLAS buffers): called by train() before the run directory is touched.
void check_training_address_space(const Config& config, size_t threads);

// `roformer attention`'s output formats, by what each holds beside the maps per selected weight
// (measured: docs/performance.md, "Memory of the edges").
enum class AttentionOutput { csv_stdout, csv_file, npy, json };
AttentionOutput attention_output_of(const std::string& out_path);  // "" = CSV on stdout

// Bytes `roformer attention` needs for one text of `length` tokens: one evaluation forward
// (evaluation_bytes at batch 1), every layer's probabilities L·H·T² (all are kept, whatever is
// selected) and two more [H,T,T] maps of the forward beside them, then the output format's
// copy of the `selected_maps` (layer, head) blocks of T² weights.
double attention_bytes(const Config& config, double length, double selected_maps,
                       AttentionOutput output);

// Throws std::invalid_argument, one line, when attention_bytes is over `budget` (default
// memory_budget_bytes()): the estimate, the limit and the longest text that fits, in tokens.
void check_attention_memory(const Config& config, size_t length, size_t selected_maps,
                            AttentionOutput output, double budget = memory_budget_bytes());

// Throws std::invalid_argument when evaluation_bytes(config, batch, length) is over 80 % of the
// machine: "<what> needs about X GiB … this machine has Y GiB of memory; <fix>". `what` names
// the setting ("eval --seq-len 16384"), `fix` the option to lower ("lower --seq-len or
// --max-tokens"). Under ulimit -v, also check_address_space with the OpenBLAS buffers.
void check_evaluation_memory(const Config& config, size_t batch, size_t length,
                             const std::string& what, const std::string& fix);

}  // namespace rf
