// Room — run: a run's config.toml as a reader takes it (see run_config.hpp).
#include "run/run_config.hpp"

#include <cstdio>
#include <mutex>
#include <set>

#include "fast/onednn_bf16_products.hpp"
#include "fast/onednn_products.hpp"
#include "fast/simd.hpp"

namespace rf {

std::vector<std::string> make_portable(ModelConfig& model) {
    std::vector<std::string> notes;
    const std::string trained = "this run was trained with ";
    if (model.isa != SimdIsa::automatic && !cpu_supports(model.isa)) {
        notes.push_back(trained + "model.isa = " + enum_name(model.isa) + "; this CPU has " +
                        supported_isas() + ": reading it with model.isa = auto (" +
                        enum_name(widest_isa()) + ")");
        model.isa = SimdIsa::automatic;
    }
    if (model.products == ProductLibrary::onednn && !onednn_built()) {
        notes.push_back(trained +
                        "model.products = onednn; this build has no oneDNN: reading it with "
                        "OpenBLAS's products (model.products = auto)");
        model.products = ProductLibrary::automatic;
    }
    if (model.precision == Precision::bf16 && !bf16_unavailable().empty()) {
        notes.push_back(trained + "model.precision = bf16; this " +
                        (cpu_has_bf16() ? "build" : "CPU") +
                        " has no bf16 products: reading it in fp32");
        model.precision = Precision::fp32;
    }
    return notes;
}

Config load_run_config(const std::string& path, const std::vector<std::string>& overrides,
                       std::vector<std::string>* notes) {
    std::vector<std::string> made;
    const Config config = load_config(path, overrides,
                                      [&](Config& c) { made = make_portable(c.model); });
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
