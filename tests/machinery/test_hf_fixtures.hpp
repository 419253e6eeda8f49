// Helpers of the Hugging Face import/export tests (test_hf_import.cpp, test_hf_export.cpp):
// the two checkpoints transformers itself wrote (tests/reference/hf/PROVENANCE-models.md) as
// HF model directories in a scratch folder, HF's logits for them, and a safetensors writer for
// the F16 / BF16 copies (ours writes F32 only).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/tokenizer.hpp"
#include "io/safetensors.hpp"

namespace rf::testing {

inline std::filesystem::path hf_reference(const std::string& name) {
    return std::filesystem::path(RF_SOURCE_DIR) / "tests/reference/hf" / name;
}

inline nlohmann::json read_json(const std::filesystem::path& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// vocab.txt of V lines: the five specials at the lines `special_lines` (HF's ids the fixture's
// inputs use are 2 = [CLS], 3 = [SEP], 4 = [MASK]), the others "w<line>".
inline std::string vocab_text(size_t V, const std::vector<size_t>& special_lines = {0, 1, 2, 3, 4}) {
    std::vector<std::string> lines(V);
    for (size_t i = 0; i < V; ++i) lines[i] = "w" + std::to_string(i);
    for (size_t k = 0; k < special_lines.size(); ++k) lines[special_lines[k]] = data::kSpecialTokens[k];
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    return text;
}

// A fresh scratch copy of fixture `name` (config.json, model.safetensors) with a vocab.txt.
inline std::filesystem::path hf_directory(const std::string& name, const std::string& tag,
                                          const std::string& vocab = "") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("rf_test_hf_" + tag);
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const char* file : {"config.json", "model.safetensors"})
        fs::copy_file(hf_reference(name) / file, dir / file);
    fs::permissions(dir / "config.json", fs::perms::owner_write, fs::perm_options::add);
    fs::permissions(dir / "model.safetensors", fs::perms::owner_write, fs::perm_options::add);
    const size_t V = read_json(dir / "config.json")["vocab_size"].get<size_t>();
    write_text(dir / "vocab.txt", vocab.empty() ? vocab_text(V) : vocab);
    return dir;
}

// The bits of x in IEEE half, rounded to nearest even (the fixtures' values are far below 65504).
inline uint16_t to_f16(float x) {
    uint32_t f;
    std::memcpy(&f, &x, 4);
    const uint32_t sign = (f >> 16) & 0x8000u;
    const int exponent = int((f >> 23) & 0xff) - 127 + 15;
    uint32_t mantissa = f & 0x7fffffu;
    if (exponent <= 0)  // a subnormal half: |x| in units of 2⁻²⁴ (nearbyint: to nearest even)
        return uint16_t(sign | uint32_t(std::nearbyint(std::fabs(double(x)) * 16777216.0)));
    uint32_t h = sign | uint32_t(exponent) << 10 | mantissa >> 13;
    const uint32_t rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return uint16_t(h);
}
inline uint16_t to_bf16(float x) {
    uint32_t f;
    std::memcpy(&f, &x, 4);
    const uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
    return uint16_t((f + rounding) >> 16);
}

// `file`'s tensors rewritten in dtype "F16" or "BF16" (metadata {"format": "pt"}).
inline void write_half_copy(const SafetensorsFile& file, const std::string& dtype,
                            const std::filesystem::path& path) {
    nlohmann::json header = {{"__metadata__", {{"format", "pt"}}}};
    std::string data;
    for (const NamedTensor& t : file.tensors) {
        const size_t begin = data.size();
        for (float v : t.data) {
            const uint16_t h = dtype == "F16" ? to_f16(v) : to_bf16(v);
            data.push_back(char(h & 0xff));
            data.push_back(char(h >> 8));
        }
        header[t.name] = {{"dtype", dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
    }
    std::string text = header.dump();
    while ((8 + text.size()) % 8) text += ' ';
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[size_t(i)] = char((uint64_t(text.size()) >> (8 * i)) & 0xff);
    write_text(path, bytes + text + data);
}

}  // namespace rf::testing
