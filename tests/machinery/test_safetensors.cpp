// Tests for stage 7 — safetensors: byte layout, round trip, other dtypes, corrupt files,
// atomic replacement.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "io/safetensors.hpp"

namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_tmp" / "safetensors";
    fs::create_directories(dir);
    return dir;
}

std::string read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

// A hand-made file: 8-byte little-endian length, the header text as given, the data bytes.
std::string raw_file(const std::string& header, const std::string& data) {
    std::string out;
    const uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    return out + header + data;
}

template <class T>
std::string bytes_of(const std::vector<T>& values) {
    return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// The message of the runtime_error that reading `path` must raise.
std::string read_error(const fs::path& path) {
    try {
        rf::read_safetensors(path.string());
    } catch (const std::runtime_error& e) { return e.what(); }
    FAIL("expected std::runtime_error for " << path);
    return "";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Bit for bit (NaN and −0 included). An empty vector's data() may be null, and memcmp with a
// null pointer is undefined even for 0 bytes, so two empty vectors compare equal first.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    return a.empty() || std::memcmp(a.data(), b.data(), 4 * a.size()) == 0;
}

std::vector<rf::NamedTensor> sample_tensors() {
    return {
        {"roformer.embeddings.word_embeddings.weight",
         {3, 2},
         {1.5f, -2.25f, 0.0f, -0.0f, 1e-30f, 3e38f}},
        {"bias", {5}, {std::nanf(""), std::numeric_limits<float>::infinity(), 1.f / 3, -7.f, 42.f}},
        {"scalar", {}, {0.125f}},
        {"empty", {0, 4}, {}},
        {"a.last", {1, 1, 2}, {9.f, 10.f}},
    };
}

}  // namespace

TEST_CASE("safetensors: the byte layout follows the format") {
    const fs::path path = temp_dir() / "layout.safetensors";
    const auto tensors = sample_tensors();
    rf::write_safetensors(path.string(), tensors, {{"step", "12"}});
    const std::string bytes = read_bytes(path);
    REQUIRE(bytes.size() >= 8);
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
    CHECK((8 + n) % 8 == 0);  // data aligned to 8 bytes
    const auto header = nlohmann::json::parse(bytes.substr(8, n));
    CHECK(header["__metadata__"]["step"] == "12");
    // tensors back to back in the listed order, raw little-endian float32
    uint64_t offset = 0;
    for (const rf::NamedTensor& t : tensors) {
        const auto& info = header.at(t.name);
        CHECK(info["dtype"] == "F32");
        CHECK(info["shape"].get<std::vector<size_t>>() == t.shape);
        CHECK(info["data_offsets"][0] == offset);
        CHECK(info["data_offsets"][1] == offset + 4 * t.data.size());
        CHECK(bytes.compare(8 + n + offset, 4 * t.data.size(), bytes_of(t.data)) == 0);
        offset += 4 * t.data.size();
    }
    CHECK(bytes.size() == 8 + n + offset);
}

TEST_CASE("safetensors: write → read gives identical names, shapes, bits and metadata") {
    const fs::path path = temp_dir() / "roundtrip.safetensors";
    const auto tensors = sample_tensors();
    const std::map<std::string, std::string> metadata = {{"config", "[model]\nhidden = 64\n"},
                                                         {"pairing", "interleaved"},
                                                         {"note", "ünïcode \"q\""}};
    rf::write_safetensors(path.string(), tensors, metadata);
    const rf::SafetensorsFile file = rf::read_safetensors(path.string());
    CHECK(file.metadata == metadata);
    REQUIRE(file.tensors.size() == tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        CAPTURE(tensors[i].name);
        CHECK(file.tensors[i].name == tensors[i].name);  // file order = written order
        CHECK(file.tensors[i].shape == tensors[i].shape);
        CHECK(same_bits(file.tensors[i].data, tensors[i].data));  // NaN, inf, -0 included
    }
    CHECK(file.find("bias") != nullptr);
    CHECK(file.find("nope") == nullptr);
    CHECK_THROWS_WITH_AS(file.at("nope", "model.safetensors"),
                         "tensor 'nope' is missing from model.safetensors", std::runtime_error);
    // writing what was read gives the same bytes
    const fs::path again = temp_dir() / "roundtrip2.safetensors";
    rf::write_safetensors(again.string(), file.tensors, file.metadata);
    CHECK(read_bytes(again) == read_bytes(path));
    // no metadata at all is fine
    rf::write_safetensors(path.string(), tensors);
    CHECK(rf::read_safetensors(path.string()).metadata.empty());
}

TEST_CASE("safetensors: F64, F16 and BF16 are read and converted to float") {
    const fs::path path = temp_dir() / "dtypes.safetensors";
    const std::vector<double> f64 = {0.1, -3.0};
    // F16 bit patterns: 1.0, -2.0, 0.5, 65504 (largest), 2^-24 (smallest subnormal), +inf
    const std::vector<uint16_t> f16 = {0x3C00, 0xC000, 0x3800, 0x7BFF, 0x0001, 0x7C00};
    // BF16 = the top half of a float32: 1.0, -0.5
    const std::vector<uint16_t> bf16 = {0x3F80, 0xBF00};
    const std::string header = R"({"d":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},)"
                               R"("h":{"dtype":"F16","shape":[2,3],"data_offsets":[16,28]},)"
                               R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[28,32]}})";
    write_bytes(path, raw_file(header, bytes_of(f64) + bytes_of(f16) + bytes_of(bf16)));
    const rf::SafetensorsFile file = rf::read_safetensors(path.string());
    CHECK(file.at("d").data == std::vector<float>{0.1f, -3.0f});
    const auto& h = file.at("h").data;
    CHECK(file.at("h").shape == std::vector<size_t>{2, 3});
    CHECK(h[0] == 1.0f);
    CHECK(h[1] == -2.0f);
    CHECK(h[2] == 0.5f);
    CHECK(h[3] == 65504.0f);
    CHECK(h[4] == std::ldexp(1.0f, -24));
    CHECK(std::isinf(h[5]));
    CHECK(file.at("b").data == std::vector<float>{1.0f, -0.5f});
}

TEST_CASE("safetensors: corrupt files give clear errors naming the file, never crashes") {
    const fs::path good = temp_dir() / "good.safetensors";
    rf::write_safetensors(good.string(), sample_tensors(), {{"k", "v"}});
    const std::string bytes = read_bytes(good);
    const fs::path bad = temp_dir() / "bad.safetensors";
    auto check_bad = [&](const std::string& content, const std::string& expected) {
        write_bytes(bad, content);
        const std::string msg = read_error(bad);
        CAPTURE(msg);
        CHECK(contains(msg, bad.string()));
        CHECK(contains(msg, expected));
    };
    check_bad("", "too short");
    check_bad(bytes.substr(0, 5), "too short");
    check_bad(bytes.substr(0, 20), "bad header length");           // header cut off
    check_bad(bytes.substr(0, bytes.size() - 1), "past the end");  // last tensor cut
    check_bad(bytes + "xxxx", "after the last tensor");            // trailing junk
    std::string huge = bytes;
    huge[7] = '\x7f';  // length ≈ 2^63
    check_bad(huge, "bad header length");
    std::string not_json = bytes;
    not_json[8] = '[';  // "{" → "[": the header no longer parses
    check_bad(not_json, "malformed JSON");
    check_bad(raw_file("[1, 2]  ", ""), "not an object");
    check_bad(raw_file(R"({"x":{"dtype":"Q7","shape":[1],"data_offsets":[0,4]}})", "abcd"),
              "unsupported dtype 'Q7'");
    check_bad(raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "abcd"),
              "needs 8 bytes");
    check_bad(raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})", "abcd"),
              "past the end");
    check_bad(raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", "abcd"),
              "end before begin");
    check_bad(raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                       "abcdefgh"),
              "overlaps");
    check_bad(raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", "abcdefgh"),
              "gap of 4 bytes");
    check_bad(raw_file(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "abcd"),
              "shape");
    check_bad(raw_file(R"({"x":{"dtype":"F32","shape":[1]}})", "abcd"), "data_offsets");
    check_bad(raw_file(R"({"__metadata__":{"k":1}})", ""), "__metadata__");
    // a missing file
    const std::string msg = read_error(temp_dir() / "does_not_exist.safetensors");
    CHECK(contains(msg, "does_not_exist.safetensors"));
}

TEST_CASE("safetensors: a failed write leaves the old file intact and no temporaries") {
    const fs::path dir = temp_dir() / "atomic";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path path = dir / "model.safetensors";
    rf::write_safetensors(path.string(), sample_tensors(), {{"step", "1"}});
    const std::string before = read_bytes(path);

    // bad input is refused before anything touches the disk
    CHECK_THROWS_AS(rf::write_safetensors(path.string(), {{"w", {2, 2}, {1.f, 2.f, 3.f}}}),
                    std::invalid_argument);
    CHECK_THROWS_AS(rf::write_safetensors(path.string(), {{"w", {1}, {1.f}}, {"w", {1}, {2.f}}}),
                    std::invalid_argument);
    CHECK_THROWS_AS(rf::write_safetensors(path.string(), {{"", {1}, {1.f}}}),
                    std::invalid_argument);
    CHECK(read_bytes(path) == before);

    // the target is a directory: the rename cannot replace it
    const fs::path directory = dir / "is_a_dir.safetensors";
    fs::create_directories(directory / "inside");
    CHECK_THROWS_AS(rf::write_safetensors(directory.string(), sample_tensors()),
                    std::runtime_error);
    CHECK(fs::is_directory(directory / "inside"));
    // the parent directory does not exist
    CHECK_THROWS_AS(
        rf::write_safetensors((dir / "missing" / "x.safetensors").string(), sample_tensors()),
        std::runtime_error);

    // a successful overwrite replaces the file completely
    rf::write_safetensors(path.string(), {{"only", {1}, {5.f}}}, {{"step", "2"}});
    const rf::SafetensorsFile now = rf::read_safetensors(path.string());
    CHECK(now.tensors.size() == 1);
    CHECK(now.metadata.at("step") == "2");

    // nothing but the two entries we made is left in the directory
    size_t entries = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        CAPTURE(entry.path());
        CHECK_FALSE(contains(entry.path().filename().string(), ".tmp"));
        ++entries;
    }
    CHECK(entries == 2);
}

TEST_CASE("safetensors: rf::Tensor conversion keeps values and checks shapes") {
    rf::Array values = rf::Array::from_shape({2, 3});
    for (size_t i = 0; i < 6; ++i) values.data()[i] = rf::Real(0.25) * rf::Real(i) - rf::Real(1);
    rf::Tensor weight(values);
    weight.set_name("layer.weight");
    const rf::NamedTensor named = rf::to_named_tensor(weight);
    CHECK(named.name == "layer.weight");
    CHECK(named.shape == std::vector<size_t>{2, 3});
    CHECK(named.data == std::vector<float>{-1.f, -0.75f, -0.5f, -0.25f, 0.f, 0.25f});
    CHECK(rf::to_named_tensor(weight, "other").name == "other");

    rf::Tensor target = rf::Tensor::zeros({2, 3});
    rf::copy_into(named, target);
    for (size_t i = 0; i < 6; ++i) CHECK(target.data()[i] == values.data()[i]);
    rf::Tensor wrong = rf::Tensor::zeros({3, 2});
    wrong.set_name("model.weight");
    CHECK_THROWS_WITH_AS(rf::copy_into(named, wrong),
                         doctest::Contains("[2, 3] but the model expects [3, 2]"),
                         std::invalid_argument);
}
