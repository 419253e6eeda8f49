// Room — run: a run's config.toml as a reader takes it (see run_config.hpp).
#include "run/run_config.hpp"

#include <cstdio>
#include <mutex>
#include <set>

#include "fast/fast_config.hpp"

namespace rf {

Config load_run_config(const std::string& path, const std::vector<std::string>& overrides,
                       std::vector<std::string>* notes) {
    std::vector<std::string> made;
    const Config config = load_config(path, overrides,
                                      [&](Config& c) { made = make_portable(c.fast); });
    if (notes != nullptr) {
        notes->insert(notes->end(), made.begin(), made.end());
    } else {
        // A command reads its run's config more than once (the directory check, then the
        // load): one line for each note.
        static std::mutex mutex;
        static std::set<std::string> said;
        const std::lock_guard<std::mutex> lock(mutex);
        for (const std::string& note : made)
            if (said.insert(note).second) std::fprintf(stderr, "note: %s\n", note.c_str());
    }
    return config;
}

}  // namespace rf
