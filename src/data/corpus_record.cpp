// Room — data: the record of a text file a run was built from (see corpus_record.hpp).
#include "data/corpus_record.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/fnv1a.hpp"
#include "io/json_whole.hpp"
#include "io/durable_file.hpp"

namespace rf::data {

using Json = nlohmann::json;

SourceFileRecord record_source_file(const std::string& path, size_t max_bytes) {
    const std::string bytes = read_file_bytes(path, max_bytes);
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a64(bytes)));
    return {path, static_cast<unsigned long long>(bytes.size()), hash};
}

namespace {
Json to_json(const SourceFileRecord& r) {
    return Json{{"path", r.path}, {"size", r.size}, {"fnv1a64", r.fnv1a64}};
}
SourceFileRecord from_json(const Json& j) {
    return {j.at("path").get<std::string>(), json_whole(j, "size", "size"),
            j.at("fnv1a64").get<std::string>()};
}
}  // namespace

std::string source_record_json(const SourceFileRecord& r) { return to_json(r).dump(2) + "\n"; }

std::string source_records_json(const std::vector<SourceFileRecord>& records) {
    Json files = Json::array();
    for (const SourceFileRecord& r : records) files.push_back(to_json(r));
    return Json{{"files", files}}.dump(2) + "\n";
}

SourceFileRecord parse_source_record(const std::string& text, const std::string& record_file,
                                     const std::string& fix) {
    try {
        return from_json(Json::parse(text));
    } catch (const Json::exception&) {
        throw std::runtime_error("'" + record_file + "' is damaged (not a path, size and FNV-1a "
                                 "record); " + fix);
    } catch (const NotJsonWhole& e) {  // a size out of range (io/json_whole.hpp)
        throw std::runtime_error("'" + record_file + "' is damaged (" + e.what() + "); " + fix);
    }
}

std::vector<SourceFileRecord> parse_source_records(const std::string& text,
                                                   const std::string& record_file,
                                                   const std::string& fix) {
    try {
        std::vector<SourceFileRecord> records;
        const Json parsed = Json::parse(text);  // (kept alive: the loop reads into it)
        for (const Json& j : parsed.at("files")) records.push_back(from_json(j));
        return records;
    } catch (const Json::exception&) {
        throw std::runtime_error("'" + record_file + "' is damaged (not a list of path, size and "
                                 "FNV-1a records); " + fix);
    } catch (const NotJsonWhole& e) {  // a size out of range (io/json_whole.hpp)
        throw std::runtime_error("'" + record_file + "' is damaged (" + e.what() + "); " + fix);
    }
}

std::string source_file_change(const SourceFileRecord& saved, size_t max_bytes) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(saved.path, ec))
        return "'" + saved.path + "' is gone since the run started";
    const SourceFileRecord now = record_source_file(saved.path, max_bytes);
    if (now.size == saved.size && now.fnv1a64 == saved.fnv1a64) return "";
    return "'" + saved.path + "' changed since the run started (" + std::to_string(saved.size) +
           " bytes, FNV-1a " + saved.fnv1a64 + "; now " + std::to_string(now.size) + " bytes, " +
           now.fnv1a64 + ")";
}

}  // namespace rf::data
