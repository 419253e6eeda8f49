// Room — finetune: the files a fine-tune's task is built from (see task_sources.hpp).
#include "finetune/task_sources.hpp"

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "data/corpus.hpp"
#include "data/corpus_record.hpp"
#include "finetune/fortunes.hpp"
#include "io/durable_file.hpp"
#include "run/checkpoint.hpp"

namespace rf {

namespace {
std::vector<std::string> task_source_files(const FinetuneConfig& fc) {
    if (fc.task != "fortunes-topic") return {fc.corpus};
    std::vector<std::string> files;
    for (const std::string& topic : data::fortune_topics()) files.push_back(fc.fortunes_dir + "/" + topic);
    return files;
}
}  // namespace

std::string task_sources_json(const FinetuneConfig& fc) {
    std::vector<data::SourceFileRecord> records;
    for (const std::string& path : task_source_files(fc))
        records.push_back(data::record_source_file(path, data::kMaxCorpusBytes));
    return data::source_records_json(records);
}

void check_task_sources(const std::string& dir, const std::string& command,
                        const std::string& fix) {
    const std::string path = run_file(dir, kTaskSourcesFile);
    if (!std::filesystem::exists(path)) return;  // a run from before task_data.json
    for (const data::SourceFileRecord& saved : data::parse_source_records(
             read_file_bytes(path, 1 << 20), path,
             "put the run's own task_data.json back, or fine-tune again into a new --out")) {
        const std::string change = data::source_file_change(saved, data::kMaxCorpusBytes);
        if (!change.empty())
            throw std::runtime_error(command + ": the task's text " + change + "; " + fix);
    }
}

}  // namespace rf
