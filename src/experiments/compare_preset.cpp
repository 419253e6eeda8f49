// Room — experiments: the comparison's preset — its [compare] table, the runs it names
// (position schemes, swept keys, explicit variants) and the config of each run.
//
//   [compare]
//   schemes = ["rope_interleaved", "learned"]      # built-in names (comparison_schemes())
//   "model.attention" = ["softmax", "linear"]      # any config key: crossed with each other
//   "position.scheme" = ["rope", "learned", "none"] #   (and with `schemes` when both are given)
//   [compare.variants]                             # extra runs, added after the crossed ones
//   softmax_rope = ["model.attention=softmax", "position.scheme=rope"]
//
// A crossed run is named by its values joined with "_", keys in the table's (alphabetical)
// order: "linear_rope". Without swept keys or variants the runs are `schemes` (default: all
// six built-in names), exactly as before.
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>

#include <toml++/toml.h>

#include "experiments/compare.hpp"

namespace rf {

const std::vector<std::string>& comparison_schemes() {
    static const std::vector<std::string> names = {"rope_interleaved", "rope_half", "sinusoidal",
                                                   "learned",          "none",      "alibi"};
    return names;
}

static std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

// The overrides a built-in scheme name stands for.
static std::vector<std::string> scheme_overrides(const std::string& scheme) {
    if (scheme == "rope_interleaved" || scheme == "rope_half")
        return {"position.scheme=rope", std::string("position.pairing=") +
                                            (scheme == "rope_half" ? "half" : "interleaved")};
    if (scheme == "sinusoidal" || scheme == "learned" || scheme == "none" || scheme == "alibi")
        return {"position.scheme=" + scheme};
    throw std::invalid_argument("unknown scheme '" + scheme + "' for compare; choose from " +
                                joined(comparison_schemes()) +
                                " (or sweep any key: [compare] \"table.key\" = [values])");
}

void apply_comparison_scheme(Config& config, const std::string& scheme) {
    for (const std::string& assignment : scheme_overrides(scheme))
        apply_override(config, assignment);
}

// ---- the [compare] table --------------------------------------------------------------------
static std::string line_of(const toml::node& node) {
    return std::to_string(node.source().begin.line);
}

// A TOML value as --set would take it, and as a run-name part: strings bare, others as written.
static std::string value_text(const toml::node& node) {
    if (node.is_string()) return node.as_string()->get();
    std::ostringstream text;
    node.visit([&](auto&& v) { text << v; });
    return text.str();
}

static std::vector<std::string> string_array(const toml::node& node, const std::string& what,
                                             const std::string& at) {
    const toml::array* list = node.as_array();
    if (!list) throw std::invalid_argument(what + " must be an array" + at);
    std::vector<std::string> out;
    for (const toml::node& item : *list) {
        if (!item.is_string()) throw std::invalid_argument(what + " must hold strings" + at);
        out.push_back(item.as_string()->get());
    }
    return out;
}

// ---- keys compare sets per run itself ---------------------------------------------------------
// train.seed is compare's seed loop (1…seeds) for every run; position.scheme and
// position.pairing are what a built-in scheme name (rope_interleaved, learned, ...) sets. A
// value given for one of them anywhere else would be overwritten — or would overwrite the
// scheme and leave a run named "rope_interleaved_learned" that is learned — so it is refused.
static const char* kSeedKey = "train.seed";
static bool is_scheme_key(const std::string& key) {
    return key == "position.scheme" || key == "position.pairing";
}
static const std::string kSeedFix =
    "compare sets train.seed = 1…seeds for every run itself; use [compare] seeds = N (or --seeds "
    "N) and remove it";

// "table.key" of a "table.key=value" assignment (as apply_override reads it).
static std::string assigned_key(const std::string& assignment) {
    std::string key = assignment.substr(0, assignment.find('='));
    const auto first = key.find_first_not_of(" \t"), last = key.find_last_not_of(" \t");
    return first == std::string::npos ? "" : key.substr(first, last - first + 1);
}

struct SweptKey {
    std::string key;
    std::vector<std::string> values;
};

// schemes (when given) × every swept key, in order; each run's name and overrides.
static void cross(CompareSettings& settings, bool schemes_given,
                  const std::vector<SweptKey>& sweep) {
    std::vector<std::pair<std::string, std::vector<std::string>>> runs;
    if (schemes_given)
        for (const std::string& s : settings.schemes) runs.push_back({s, scheme_overrides(s)});
    else
        runs.push_back({"", {}});
    for (const SweptKey& swept : sweep) {
        std::vector<std::pair<std::string, std::vector<std::string>>> next;
        for (const auto& [name, overrides] : runs)
            for (const std::string& value : swept.values) {
                std::vector<std::string> more = overrides;
                more.push_back(swept.key + "=" + value);
                next.push_back({name.empty() ? value : name + "_" + value, more});
            }
        runs = std::move(next);
    }
    settings.schemes.clear();
    for (const auto& [name, overrides] : runs) {
        settings.schemes.push_back(name);
        settings.variants[name] = overrides;
    }
}

// Reads the [compare] table into `settings`; errors name the file and line.
static void read_compare_table(const toml::table& table, const std::string& path,
                               CompareSettings& settings) {
    bool schemes_given = false;
    std::vector<SweptKey> sweep;
    std::vector<std::pair<std::string, std::vector<std::string>>> variants;
    for (auto&& [key_name, node] : table) {
        const std::string key(key_name.str());
        const std::string at = " in " + path + " (line " + line_of(node) + ")";
        if (key == "schemes") {
            settings.schemes = string_array(node, "compare.schemes", at);
            schemes_given = true;
        } else if (key == "seeds" || key == "jobs") {
            const toml::value<int64_t>* v = node.as_integer();
            if (!v || v->get() < 1)
                throw std::invalid_argument("compare." + key + " must be an integer ≥ 1" + at);
            (key == "seeds" ? settings.seeds : settings.jobs) = size_t(v->get());
        } else if (key == "loss_threshold") {
            if (!node.is_number())
                throw std::invalid_argument("compare.loss_threshold must be a number" + at);
            settings.loss_threshold = node.value<double>().value_or(0.0);
        } else if (key == "variants") {
            if (!node.is_table())
                throw std::invalid_argument("compare.variants must be a table [compare.variants]" +
                                            at);
            for (auto&& [name, list] : *node.as_table())
                variants.push_back(
                    {std::string(name.str()),
                     string_array(list, "compare.variants." + std::string(name.str()),
                                  " in " + path + " (line " + line_of(list) + ")")});
        } else if (key.find('.') != std::string::npos) {
            Config scratch;
            find_config_field(scratch, key, at);  // an unknown key fails here, with a hint
            const toml::array* list = node.as_array();
            if (!list || list->empty())
                throw std::invalid_argument("compare: \"" + key +
                                            "\" must be a non-empty array of values" + at);
            if (key == kSeedKey)
                throw std::invalid_argument("compare: \"" + key + "\" cannot be swept" + at +
                                            ": " + kSeedFix);
            SweptKey swept{key, {}};
            for (const toml::node& item : *list) swept.values.push_back(value_text(item));
            sweep.push_back(swept);
        } else {
            throw std::invalid_argument("unknown key 'compare." + key + "'" + at +
                                        "; [compare] takes schemes, seeds, jobs, loss_threshold, "
                                        "variants and swept keys \"table.key\" = [values]");
        }
    }
    for (const SweptKey& swept : sweep)
        if (schemes_given && is_scheme_key(swept.key))
            throw std::invalid_argument(
                "compare: \"" + swept.key + "\" is swept in " + path +
                " but compare.schemes already sets it for every run (each run would be named by "
                "its scheme and trained with the swept value); sweep it without schemes, or "
                "drop it");
    for (const auto& [name, overrides] : variants)
        for (const std::string& assignment : overrides)
            if (assigned_key(assignment) == kSeedKey)
                throw std::invalid_argument("compare.variants." + name + " sets train.seed in " +
                                            path + ": " + kSeedFix);
    if (!sweep.empty())
        cross(settings, schemes_given, sweep);
    else if (!variants.empty() && !schemes_given)
        settings.schemes.clear();
    for (const auto& [name, overrides] : variants) {
        settings.schemes.push_back(name);
        settings.variants[name] = overrides;
    }
}

ComparePreset load_compare_preset(const std::optional<std::string>& path,
                                  const std::vector<std::string>& overrides) {
    ComparePreset preset;
    preset.base = default_config();
    if (path) {
        if (!std::filesystem::is_regular_file(*path))
            throw std::runtime_error("compare preset '" + *path +
                                     "' not found; e.g. --config configs/compare.toml");
        toml::table root;
        try {
            root = toml::parse_file(*path);
        } catch (const toml::parse_error& e) {
            throw std::runtime_error(*path + ":" + std::to_string(e.source().begin.line) + ":" +
                                     std::to_string(e.source().begin.column) +
                                     ": malformed TOML: " + std::string(e.description()));
        }
        if (const toml::node* compare = root.get("compare")) {
            if (!compare->is_table())
                throw std::invalid_argument("'compare' must be a table [compare] in " + *path);
            read_compare_table(*compare->as_table(), *path, preset.settings);
        }
        for (const char* key : {kSeedKey, "position.scheme", "position.pairing"})
            if (const toml::node* node = root.at_path(key).node())
                preset.per_run_keys_set.push_back(
                    {key, *path + " (line " + line_of(*node) + ")"});
        apply_toml_file(preset.base, *path, {"compare"});  // every other table: the run config
    }
    for (const std::string& assignment : overrides) {
        const std::string key = assigned_key(assignment);
        if (key == kSeedKey || is_scheme_key(key))
            preset.per_run_keys_set.push_back({key, "--set " + assignment});
        apply_override(preset.base, assignment);
    }
    for (const auto& [key, where] : preset.per_run_keys_set)
        if (key == kSeedKey)
            throw std::invalid_argument("compare: train.seed is set by " + where + ": " + kSeedFix);
    validate(preset.base);
    return preset;
}

// ---- one run ----------------------------------------------------------------------------------
Config comparison_run_config(const Config& base, const std::string& name, size_t seed,
                             const std::map<std::string, std::vector<std::string>>& variants) {
    Config config = base;
    const auto it = variants.find(name);
    if (it != variants.end())
        for (const std::string& assignment : it->second) apply_override(config, assignment);
    else
        apply_comparison_scheme(config, name);
    config.train.seed = seed;
    validate(config);
    return config;
}

constexpr size_t kMaxCompareSeeds = 1000, kMaxCompareJobs = 256;

void check_compare_preset(const ComparePreset& preset) {
    check_compare_settings(preset.settings);
    for (const std::string& name : preset.settings.schemes) {
        if (preset.settings.variants.count(name)) continue;  // a sweep's or a variant's own keys
        for (const auto& [key, where] : preset.per_run_keys_set)
            if (is_scheme_key(key))
                throw std::invalid_argument(
                    "compare: " + key + " is set by " + where + ", but the run '" + name +
                    "' sets it from its scheme name; pick the schemes with --schemes / "
                    "compare.schemes (or sweep \"" + key + "\" without schemes) and remove it");
    }
}

void check_compare_settings(const CompareSettings& settings) {
    if (settings.schemes.empty())
        throw std::invalid_argument("compare: no schemes given (--schemes a,b,...)");
    if (settings.seeds == 0) throw std::invalid_argument("compare: --seeds must be ≥ 1");
    if (settings.seeds > kMaxCompareSeeds)
        throw std::invalid_argument("compare: seeds = " + std::to_string(settings.seeds) +
                                    " is over the limit of " + std::to_string(kMaxCompareSeeds) +
                                    " (each is a full training run per scheme); use fewer seeds");
    if (settings.jobs > kMaxCompareJobs)
        throw std::invalid_argument("compare: jobs = " + std::to_string(settings.jobs) +
                                    " is over the limit of " + std::to_string(kMaxCompareJobs) +
                                    " processes; use about one per core");
    std::set<std::string> seen;
    for (const std::string& s : settings.schemes) {
        if (!settings.variants.count(s)) scheme_overrides(s);  // throws on unknown names
        if (!seen.insert(s).second)
            throw std::invalid_argument("compare: scheme '" + s + "' listed twice");
        if (s.find_first_of("/\\ ") != std::string::npos || s == "." || s == "..")
            throw std::invalid_argument("compare: run name '" + s +
                                        "' cannot be a directory name; "
                                        "use values without '/', '\\' or spaces");
    }
}

}  // namespace rf
