// Room — io: tensors in the safetensors format (the file HF transformers loads), readable
// and testable without a model.
//
// Layout of a .safetensors file:
//   [8 bytes]  N, the header length, unsigned little-endian
//   [N bytes]  JSON header: {"__metadata__": {str: str, ...},
//                            "<name>": {"dtype": "F32", "shape": [d0, d1, ...],
//                                       "data_offsets": [begin, end]}, ...}
//              padded with spaces so the data starts at a multiple of 8
//   [rest]     the tensors' raw little-endian bytes; offsets are relative to the start of
//              this region, tensors back to back with no gaps, in the order written.
// We write F32; we read F32, F64, F16 and BF16 (converted to float). Writes are atomic: the
// bytes go to a temporary file next to the target, which is renamed over it only when
// complete, so a crash never leaves a half-written checkpoint.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "tensor/tensor.hpp"

namespace rf {

struct NamedTensor {
    std::string name;
    std::vector<size_t> shape;  // [] for a scalar (one element)
    std::vector<float> data;    // row-major, product(shape) values
};

struct SafetensorsFile {
    std::vector<NamedTensor> tensors;             // in file (data offset) order
    std::map<std::string, std::string> metadata;  // the "__metadata__" map, may be empty

    // The tensor called `name`, or nullptr.
    const NamedTensor* find(const std::string& name) const;
    // The tensor called `name`; throws std::runtime_error naming it (and `context`) if absent.
    const NamedTensor& at(const std::string& name, const std::string& context = "") const;
};

// Writes `tensors` in the given order plus `metadata` to `path` atomically. Throws
// std::invalid_argument for bad input (empty or duplicate names, a name "__metadata__",
// data size ≠ product(shape)) and std::runtime_error when the file cannot be written; in
// both cases an existing file at `path` is left as it was.
void write_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// The bytes write_safetensors would write (same checks; `path` only names the file in
// messages): for writers that commit several files as one unit (run/checkpoint_commit.hpp).
std::string encode_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                               const std::map<std::string, std::string>& metadata = {});

// Reads and fully validates a file; throws std::runtime_error naming the file and the
// problem (too short, bad header length, malformed JSON, unknown dtype, shape/offset
// mismatch, offsets out of range, overlapping or leaving gaps).
// Refuses a directory, FIFO or device (/dev/zero) before reading.
SafetensorsFile read_safetensors(const std::string& path);
// The same checks on bytes already in memory; `path` only names them in messages.
SafetensorsFile parse_safetensors(const std::string& bytes, const std::string& path);
// The "__metadata__" map alone: reads the 8-byte length and the header, never the tensors,
// with the header's checks (a reader that only asks what a file is, not what it holds).
std::map<std::string, std::string> read_safetensors_metadata(const std::string& path);

// ---- rf::Tensor convenience -----------------------------------------------------------------
// A copy of the tensor's values as float, under `name` (the tensor's own name if empty).
NamedTensor to_named_tensor(const Tensor& tensor, const std::string& name = "");
// Copies `source` into `target`'s values; throws std::invalid_argument naming both shapes
// when they differ.
void copy_into(const NamedTensor& source, Tensor& target);

}  // namespace rf
