// Room — finetune: the files a fine-tune's task is built from (finetune.corpus for the KJV tasks,
// the topic files of finetune.fortunes_dir for fortunes-topic), recorded in task_data.json when
// the run starts (path, size, FNV-1a: data/corpus_record.hpp, the rule `train --resume` uses
// for corpus.json). `finetune --resume` and `classify --test-split` rebuild the task from those
// files, so both refuse, naming the file, when one changed since.
#pragma once

#include <string>

#include "finetune/finetune_config.hpp"

namespace rf {

inline constexpr const char* kTaskSourcesFile = "task_data.json";

// task_data.json's text for the task `fc` names, as its files are now.
std::string task_sources_json(const FinetuneConfig& fc);

// Throws one line — "<command>: the task's text 'X' changed since the run started (…); <fix>"
// — when a file recorded in dir/task_data.json differs now. A run without the record is not
// checked.
void check_task_sources(const std::string& dir, const std::string& command,
                        const std::string& fix);

}  // namespace rf
