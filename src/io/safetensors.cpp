// Room — io: writing and reading safetensors files (format in safetensors.hpp).
#include "io/safetensors.hpp"

#include "io/read_file.hpp"
#include "io/durable_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.cpp copies raw bytes and assumes a little-endian machine"
#endif

namespace rf {
namespace {

using Json = nlohmann::ordered_json;  // keeps the header's keys in the order written

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // same sanity bound as the reference reader

// The header's checks and its tensors (header_only: the checks of the header alone, for a
// prefix of the file that ends where the header does).
SafetensorsFile parse_safetensors_part(const std::string& bytes, const std::string& path,
                                       bool header_only);

size_t element_count(const std::vector<size_t>& shape) {
    size_t n = 1;
    for (size_t d : shape) n *= d;
    return n;
}

std::string shape_text(const std::vector<size_t>& shape) { return shape_str(Shape(shape)); }

// ---- dtype conversion on read -------------------------------------------------------------------
size_t dtype_bytes(const std::string& dtype) {
    if (dtype == "F32") return 4;
    if (dtype == "F64") return 8;
    if (dtype == "F16" || dtype == "BF16") return 2;
    return 0;
}

// IEEE half → float: sign, 5-bit exponent (bias 15), 10-bit mantissa; subnormals, inf, NaN.
float half_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    float magnitude;
    if (exponent == 0)
        magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    else if (exponent == 31)
        magnitude = mantissa ? NAN : INFINITY;
    else
        magnitude =
            std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
    uint32_t bits;
    std::memcpy(&bits, &magnitude, 4);
    bits |= sign;
    float out;
    std::memcpy(&out, &bits, 4);
    return out;
}

void convert(const std::string& dtype, const char* src, size_t n, float* dst) {
    if (n == 0) return;  // an empty tensor's data() may be null, which memcpy must not get
    if (dtype == "F32") {
        std::memcpy(dst, src, n * 4);
    } else if (dtype == "F64") {
        for (size_t i = 0; i < n; ++i) {
            double d;
            std::memcpy(&d, src + 8 * i, 8);
            dst[i] = static_cast<float>(d);
        }
    } else {
        for (size_t i = 0; i < n; ++i) {
            uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            if (dtype == "F16") {
                dst[i] = half_to_float(h);
            } else {  // BF16: the top 16 bits of a float
                const uint32_t bits = static_cast<uint32_t>(h) << 16;
                std::memcpy(&dst[i], &bits, 4);
            }
        }
    }
}

struct Entry {
    std::string name, dtype;
    std::vector<size_t> shape;
    uint64_t begin = 0, end = 0;
};

// Reads one header entry {"dtype", "shape", "data_offsets"}; `fail` throws with the file name.
template <class Fail>
Entry parse_entry(const std::string& name, const Json& info, const Fail& fail) {
    Entry e;
    e.name = name;
    if (!info.is_object()) fail("header entry '" + name + "' is not a JSON object");
    const auto dtype = info.find("dtype");
    const auto shape = info.find("shape");
    const auto offsets = info.find("data_offsets");
    if (dtype == info.end() || !dtype->is_string())
        fail("tensor '" + name + "' has no string \"dtype\"");
    if (shape == info.end() || !shape->is_array())
        fail("tensor '" + name + "' has no array \"shape\"");
    if (offsets == info.end() || !offsets->is_array() || offsets->size() != 2)
        fail("tensor '" + name + "' needs \"data_offsets\": [begin, end]");
    e.dtype = dtype->get<std::string>();
    if (dtype_bytes(e.dtype) == 0)
        fail("tensor '" + name + "' has unsupported dtype '" + e.dtype +
             "' (readable: F32, F64, F16, BF16)");
    for (const Json& d : *shape) {
        if (!d.is_number_unsigned())
            fail("tensor '" + name + "' has a shape entry that is not a non-negative integer");
        e.shape.push_back(d.get<size_t>());
    }
    for (const Json& o : *offsets)
        if (!o.is_number_unsigned())
            fail("tensor '" + name + "' has data_offsets that are not non-negative integers");
    e.begin = (*offsets)[0].get<uint64_t>();
    e.end = (*offsets)[1].get<uint64_t>();
    if (e.end < e.begin)
        fail("tensor '" + name + "' has data_offsets [" + std::to_string(e.begin) + ", " +
             std::to_string(e.end) + "] with end before begin");
    // product(shape) · bytes must equal end − begin (guarding against overflow)
    uint64_t bytes = dtype_bytes(e.dtype);
    for (size_t d : e.shape) {
        if (d != 0 && bytes > UINT64_MAX / d) fail("tensor '" + name + "' has an absurd shape");
        bytes *= d;
    }
    if (bytes != e.end - e.begin)
        fail("tensor '" + name + "' of shape " + shape_text(e.shape) + " and dtype " + e.dtype +
             " needs " + std::to_string(bytes) + " bytes but its data_offsets span " +
             std::to_string(e.end - e.begin));
    return e;
}

}  // namespace

// ---- SafetensorsFile --------------------------------------------------------------------------
const NamedTensor* SafetensorsFile::find(const std::string& name) const {
    for (const NamedTensor& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

const NamedTensor& SafetensorsFile::at(const std::string& name, const std::string& context) const {
    if (const NamedTensor* t = find(name)) return *t;
    throw std::runtime_error("tensor '" + name + "' is missing" +
                             (context.empty() ? "" : " from " + context));
}

// ---- write ------------------------------------------------------------------------------------
std::string encode_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                               const std::map<std::string, std::string>& metadata) {
    Json header = Json::object();
    if (!metadata.empty()) {
        Json meta = Json::object();
        for (const auto& [key, value] : metadata) meta[key] = value;
        header["__metadata__"] = meta;
    }
    std::set<std::string> names;
    uint64_t offset = 0;
    for (const NamedTensor& t : tensors) {
        if (t.name.empty() || t.name == "__metadata__")
            throw std::invalid_argument("write_safetensors('" + path + "'): invalid tensor name '" +
                                        t.name + "'");
        if (!names.insert(t.name).second)
            throw std::invalid_argument("write_safetensors('" + path + "'): tensor name '" +
                                        t.name + "' appears twice");
        if (t.data.size() != element_count(t.shape))
            throw std::invalid_argument("write_safetensors('" + path + "'): tensor '" + t.name +
                                        "' has " + std::to_string(t.data.size()) +
                                        " values but shape " + shape_text(t.shape) + " needs " +
                                        std::to_string(element_count(t.shape)));
        const uint64_t bytes = 4 * t.data.size();
        header[t.name] = {
            {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string json;
    try {
        json = header.dump();
    } catch (const Json::exception& e) {  // e.g. a name or metadata value that is not UTF-8
        throw std::invalid_argument("write_safetensors('" + path + "'): " + e.what());
    }
    json.append((8 - json.size() % 8) % 8, ' ');  // data starts at a multiple of 8

    std::string bytes;
    bytes.reserve(8 + json.size() + offset);
    const uint64_t length = json.size();
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
    bytes += json;
    for (const NamedTensor& t : tensors)
        bytes.append(reinterpret_cast<const char*>(t.data.data()), 4 * t.data.size());
    return bytes;
}

void write_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
    const std::string bytes = encode_safetensors(path, tensors, metadata);
    try {
        write_file_atomically(path, bytes);
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(std::string("checkpoint: ") + e.what());
    }
}

// ---- read -------------------------------------------------------------------------------------
SafetensorsFile read_safetensors(const std::string& path) {
    try {  // not a directory, FIFO or /dev/zero; at most kMaxReadBytes
        return parse_safetensors(read_regular_file(path, "checkpoint",
                                                   "give the model.safetensors of a run directory",
                                                   kMaxReadBytes),
                                 path);
    } catch (const std::bad_alloc&) {
        throw std::runtime_error("checkpoint '" + path +
                                 "': not enough memory to read it; is it the right file?");
    }
}

SafetensorsFile parse_safetensors(const std::string& bytes, const std::string& path) {
    return parse_safetensors_part(bytes, path, false);
}

std::map<std::string, std::string> read_safetensors_metadata(const std::string& path) {
    // The 8-byte length, then the header only: the tensors are never read.
    const uint64_t size = require_regular_file(path, "checkpoint",
                                               "give the model.safetensors of a run directory");
    std::ifstream in(path, std::ios::binary);
    std::string bytes(static_cast<size_t>(std::min<uint64_t>(size, 8)), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    uint64_t length = 0;
    for (size_t i = 0; i < 8 && i < size_t(in.gcount()); ++i)
        length |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    if (in.gcount() == 8 && length <= kMaxHeaderBytes && length <= size - 8) {
        bytes.resize(8 + static_cast<size_t>(length));
        in.read(bytes.data() + 8, static_cast<std::streamsize>(length));
        bytes.resize(8 + static_cast<size_t>(in.gcount()));
    }
    return parse_safetensors_part(bytes, path, true).metadata;  // its checks name what is wrong
}

namespace {
SafetensorsFile parse_safetensors_part(const std::string& bytes, const std::string& path,
                                       bool header_only) {
    auto fail = [&](const std::string& what) -> void {
        throw std::runtime_error("checkpoint '" + path + "': " + what);
    };
    if (bytes.size() < 8)
        fail("file too short (" + std::to_string(bytes.size()) +
             " bytes) to hold the 8-byte header length; not a safetensors file or truncated");
    uint64_t length = 0;
    for (int i = 0; i < 8; ++i)
        length |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    if (length == 0 || length > kMaxHeaderBytes || length > bytes.size() - 8)
        fail("bad header length " + std::to_string(length) + " for a file of " +
             std::to_string(bytes.size()) + " bytes; not a safetensors file or truncated");

    Json header;
    try {
        header = Json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(length));
    } catch (const Json::exception& e) {  // parse_error, or out_of_range: a number overflows
        std::string what = e.what();      // "[json.exception.parse_error.101] parse error at …"
        if (what.rfind("[json.", 0) == 0 && what.find("] ") != std::string::npos)
            what = what.substr(what.find("] ") + 2);
        fail("malformed JSON header (" + what + "); not a safetensors file or damaged");
    }
    if (!header.is_object()) fail("the JSON header is not an object");

    SafetensorsFile file;
    std::vector<Entry> entries;
    for (const auto& [key, value] : header.items()) {
        if (key == "__metadata__") {
            if (!value.is_object()) fail("__metadata__ is not a JSON object");
            for (const auto& [k, v] : value.items()) {
                if (!v.is_string()) fail("__metadata__ value for '" + k + "' is not a string");
                file.metadata[k] = v.get<std::string>();
            }
            continue;
        }
        entries.push_back(parse_entry(key, value, fail));
    }
    if (header_only) return file;

    // The data region must be covered exactly: sorted by begin, each tensor starts where the
    // previous one ended (no overlap, no gap), the last ends at the end of the file.
    const uint64_t data_size = bytes.size() - 8 - length;
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
    uint64_t expected = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        if (e.end > data_size)
            fail("tensor '" + e.name + "' has data_offsets [" + std::to_string(e.begin) + ", " +
                 std::to_string(e.end) + "] past the end of the data (" +
                 std::to_string(data_size) + " bytes); truncated file?");
        if (e.begin < expected)
            fail("tensor '" + e.name + "' overlaps tensor '" + entries[i - 1].name + "'");
        if (e.begin > expected)
            fail("gap of " + std::to_string(e.begin - expected) + " bytes before tensor '" +
                 e.name + "'");
        expected = e.end;
    }
    if (expected != data_size)
        fail(std::to_string(data_size - expected) +
             " bytes after the last tensor are not "
             "described by the header");

    const char* data = bytes.data() + 8 + length;
    for (const Entry& e : entries) {
        NamedTensor t{e.name, e.shape,
                      std::vector<float>((e.end - e.begin) / dtype_bytes(e.dtype))};
        convert(e.dtype, data + e.begin, t.data.size(), t.data.data());
        file.tensors.push_back(std::move(t));
    }
    return file;
}
}  // namespace

// ---- rf::Tensor convenience ---------------------------------------------------------------------
NamedTensor to_named_tensor(const Tensor& tensor, const std::string& name) {
    NamedTensor out{name.empty() ? tensor.name() : name, tensor.shape(), {}};
    const Real* src = tensor.data();
    out.data.assign(src, src + tensor.numel());  // Real → float
    return out;
}

void copy_into(const NamedTensor& source, Tensor& target) {
    if (Shape(source.shape) != target.shape())
        throw std::invalid_argument("tensor '" + source.name + "' has shape " +
                                    shape_text(source.shape) + " but the model expects " +
                                    shape_str(target.shape()) + " for '" + target.name() + "'");
    std::copy(source.data.begin(), source.data.end(), target.data());  // float → Real
}

}  // namespace rf
