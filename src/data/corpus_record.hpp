// Room — data: the record of a text file a run was built from (the pre-training corpus, a fine-tune
// task's corpus or fortunes files): its path, size and FNV-1a hash (io/fnv1a.hpp). A run writes
// it when it starts; every command that builds the run's data again (train --resume, finetune
// --resume, classify --test-split) compares it with the file as it is now, here, by one rule.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace rf::data {

struct SourceFileRecord {
    std::string path;
    unsigned long long size = 0;
    std::string fnv1a64;  // 16 hex digits
};

// The record of `path` now (reads it; refuses a file over max_bytes like read_text_file).
SourceFileRecord record_source_file(const std::string& path, size_t max_bytes);

// JSON text of one record, and of several (the "files" of a fine-tune's task_data.json).
std::string source_record_json(const SourceFileRecord& r);
std::string source_records_json(const std::vector<SourceFileRecord>& records);
// Parses what source_record(s)_json wrote; throws std::runtime_error naming `record_file` as
// damaged (with `fix`) when it is not.
SourceFileRecord parse_source_record(const std::string& text, const std::string& record_file,
                                     const std::string& fix);
std::vector<SourceFileRecord> parse_source_records(const std::string& text,
                                                   const std::string& record_file,
                                                   const std::string& fix);

// "" when the file at saved.path is still the file recorded; otherwise one clause naming it:
// "'X' changed since the run started (N bytes, FNV-1a H; now M bytes, G)" or "'X' is gone".
std::string source_file_change(const SourceFileRecord& saved, size_t max_bytes);

}  // namespace rf::data
