// Room — config: reading, overriding, checking and writing the run configuration.
//
// The key table itself — the ONE list of "table.key → member of Config" — is
// config_fields.cpp.
#include "config/config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <variant>

#include <toml++/toml.h>

#include "config/toml_quote.hpp"
#include "config/validate_effects.hpp"
#include "io/read_file.hpp"
#include "tensor/format.hpp"

namespace rf {
namespace {

// ---- the key table ------------------------------------------------------------------------
using Field = ConfigField;

const std::vector<std::string> kTables = {"model", "position", "data", "train"};

std::string full_key(const Field& f) { return f.name(); }

std::string join(const std::vector<std::string>& items) {
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
    return s;
}

// Levenshtein distance, for "did you mean" hints on misspelt keys.
size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// Finds `table.key`; throws the "unknown key" / "unknown table" message otherwise.
Field& find_field(std::vector<Field>& fields, const std::string& table, const std::string& key,
                  const std::string& where) {
    if (std::find(kTables.begin(), kTables.end(), table) == kTables.end())
        throw std::invalid_argument("unknown table '[" + table + "]'" + where +
                                    "; known tables: " + join(kTables));
    std::vector<std::string> known;
    std::string closest;
    size_t best = 3;  // suggest only within 2 edits
    for (Field& f : fields) {
        if (table != f.table) continue;
        if (key == f.key) return f;
        known.push_back(f.key);
        const size_t d = edit_distance(key, f.key);
        if (d < best) best = d, closest = f.key;
    }
    std::string hint = closest.empty() ? "" : "; did you mean '" + table + "." + closest + "'?";
    throw std::invalid_argument("unknown key '" + table + "." + key + "'" + where + hint +
                                (hint.empty() ? "; k" : " K") + "nown keys in [" + table +
                                "]: " + join(known));
}

// ---- values ---------------------------------------------------------------------------------

std::string type_name(const toml::node& node) {
    switch (node.type()) {
        case toml::node_type::string:
            return "string";
        case toml::node_type::integer:
            return "integer";
        case toml::node_type::floating_point:
            return "float";
        case toml::node_type::boolean:
            return "boolean";
        case toml::node_type::table:
            return "table";
        case toml::node_type::array:
            return "array";
        default:
            return "date/time";
    }
}

// A short rendering of the offending value for messages: `got string "abc"`.
std::string describe(const toml::node& node) {
    std::ostringstream value;
    node.visit([&](auto&& concrete) { value << concrete; });
    std::string text = value.str();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return type_name(node) + " " + text;
}

// member = node, checking the TOML type. `where` is " in FILE (line N)" or " in --set".
void assign(const Field& field, const toml::node& node, const std::string& where) {
    const std::string key = full_key(field);
    auto wrong = [&](const char* expected) {
        return std::invalid_argument(key + " must be " + expected + ", got " + describe(node) +
                                     where);
    };
    if (const EnumField* choice = std::get_if<EnumField>(&field.value)) {
        if (!node.is_string()) throw wrong(("one of " + choice->choices()).c_str());
        try {
            choice->set(node.as_string()->get(), key);
        } catch (const std::invalid_argument& e) { throw std::invalid_argument(e.what() + where); }
        return;
    }
    std::visit(
        [&](auto member) {
            using T = std::remove_pointer_t<decltype(member)>;
            if constexpr (std::is_same_v<T, EnumField>) {
            } else if constexpr (std::is_same_v<T, size_t>) {
                if (!node.is_integer()) throw wrong("an integer");
                const int64_t v = node.as_integer()->get();
                if (v < 0) throw wrong("a non-negative integer");
                *member = static_cast<size_t>(v);
            } else if constexpr (std::is_same_v<T, double>) {
                if (node.is_floating_point())
                    *member = node.as_floating_point()->get();
                else if (node.is_integer())
                    *member = static_cast<double>(node.as_integer()->get());
                else
                    throw wrong("a number");
            } else if constexpr (std::is_same_v<T, bool>) {
                if (!node.is_boolean()) throw wrong("true or false");
                *member = node.as_boolean()->get();
            } else {
                if (!node.is_string()) throw wrong("a string");
                *member = node.as_string()->get();
            }
        },
        field.value);
}

std::string render(const ConfigValue& member) {
    return std::visit(
        [](auto value) -> std::string {
            using T = std::remove_pointer_t<decltype(value)>;
            if constexpr (std::is_same_v<T, EnumField>)
                return quote_toml(value.get());
            else if constexpr (std::is_same_v<T, size_t>)
                return std::to_string(*value);
            else if constexpr (std::is_same_v<T, double>)
                return format_shortest(*value);
            else if constexpr (std::is_same_v<T, bool>)
                return *value ? "true" : "false";
            else
                return quote_toml(*value);
        },
        member);
}

std::string trim(const std::string& s) {
    const size_t begin = s.find_first_not_of(" \t");
    if (begin == std::string::npos) return "";
    return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

}  // namespace

// ---- public API -------------------------------------------------------------------------------
Config default_config() { return Config{}; }

std::vector<std::string> config_keys() {
    Config scratch;
    std::vector<std::string> keys;
    for (const Field& f : config_fields(scratch)) keys.push_back(full_key(f));
    return keys;
}

ConfigField find_config_field(Config& config, const std::string& name, const std::string& where) {
    const size_t dot = name.find('.');
    if (dot == std::string::npos)
        throw std::invalid_argument("'" + name + "'" + where +
                                    " is not a table.key name, e.g. train.lr");
    std::vector<Field> fields = config_fields(config);
    return find_field(fields, name.substr(0, dot), name.substr(dot + 1), where);
}

std::string render_value(const ConfigValue& value) { return render(value); }

std::map<std::string, std::string> model_signature(const Config& config) {
    Config copy = config;  // the key table hands out mutable pointers
    std::map<std::string, std::string> signature;
    for (const Field& f : config_fields(copy))
        if (!f.eval_time) signature[f.name()] = render(f.value);
    return signature;
}

void apply_toml_file(Config& config, const std::string& path,
                     const std::vector<std::string>& other_tables) {
    const std::string text = read_regular_file(
        path, "config file",
        "give a .toml file, e.g. configs/tiny.toml (relative to the working directory)",
        kMaxConfigBytes);
    apply_toml_text(config, text, path, other_tables);
}

void apply_toml_text(Config& config, const std::string& text, const std::string& path,
                     const std::vector<std::string>& other_tables) {
    toml::table root;
    try {
        root = toml::parse(text, path);
    } catch (const toml::parse_error& e) {
        const auto& begin = e.source().begin;
        throw std::runtime_error(path + ":" + std::to_string(begin.line) + ":" +
                                 std::to_string(begin.column) +
                                 ": malformed TOML: " + std::string(e.description()));
    }
    std::vector<Field> fields = config_fields(config);
    for (auto&& [table_key, table_node] : root) {
        const std::string table(table_key.str());
        if (std::find(other_tables.begin(), other_tables.end(), table) != other_tables.end())
            continue;
        const std::string at =
            " in " + path + " (line " + std::to_string(table_node.source().begin.line) + ")";
        if (!table_node.is_table()) {
            const bool known = std::find(kTables.begin(), kTables.end(), table) != kTables.end();
            throw std::invalid_argument(
                known ? "'" + table + "' must be a table [" + table + "]" + at
                      : "unknown key '" + table + "'" + at +
                            "; every key belongs to a table: " + join(kTables));
        }
        for (auto&& [key, node] : *table_node.as_table()) {
            const std::string where =
                " in " + path + " (line " + std::to_string(node.source().begin.line) + ")";
            assign(find_field(fields, table, std::string(key.str()), where), node, where);
        }
    }
}

void apply_override(Config& config, const std::string& assignment) {
    const size_t eq = assignment.find('=');
    const std::string name = trim(assignment.substr(0, eq));
    const size_t dot = name.find('.');
    if (eq == std::string::npos || dot == std::string::npos)
        throw std::invalid_argument("--set '" + assignment +
                                    "': expected table.key=value, e.g. train.lr=3e-4");
    const std::string value = trim(assignment.substr(eq + 1));
    std::vector<Field> fields = config_fields(config);
    const std::string where = " in --set " + name;
    Field& field = find_field(fields, name.substr(0, dot), name.substr(dot + 1), " in --set");

    // Strings and enum words may be written bare (data.path=data/x.txt, model.attention=linear)
    // or quoted as in TOML.
    const bool bare = value.empty() || (value.front() != '"' && value.front() != '\'');
    if (bare && std::holds_alternative<std::string*>(field.value)) {
        *std::get<std::string*>(field.value) = value;
        return;
    }
    if (bare && std::holds_alternative<EnumField>(field.value)) {
        try {
            std::get<EnumField>(field.value).set(value, name);
        } catch (const std::invalid_argument& e) { throw std::invalid_argument(e.what() + where); }
        return;
    }
    toml::table parsed;
    try {
        parsed = toml::parse("value = " + value);
    } catch (const toml::parse_error&) {
        const char* expected = std::visit(
            [](auto member) {
                using T = std::remove_pointer_t<decltype(member)>;
                if constexpr (std::is_same_v<T, EnumField>)
                    return "one of its words";
                else if constexpr (std::is_same_v<T, size_t>)
                    return "an integer";
                else if constexpr (std::is_same_v<T, double>)
                    return "a number";
                else if constexpr (std::is_same_v<T, bool>)
                    return "true or false";
                else
                    return "a string";
            },
            field.value);
        throw std::invalid_argument(name + " must be " + std::string(expected) + ", got '" + value +
                                    "'" + where);
    }
    if (parsed.size() != 1 || !parsed.contains("value"))
        throw std::invalid_argument("--set " + name + ": the value '" + value +
                                    "' is not a single TOML value");
    assign(field, *parsed.get("value"), where);
}

// The first line of every file to_toml writes: a run's own config.toml.
static const char* const kResolvedHeader = "# roformer configuration, fully resolved (every key)";

std::string to_toml(const Config& config) {
    Config copy = config;  // the key table hands out mutable pointers
    std::string out = std::string(kResolvedHeader) + "\n";
    std::string current;
    for (const Field& f : config_fields(copy)) {
        if (current != f.table) {
            out += "\n[" + std::string(f.table) + "]\n";
            current = f.table;
        }
        out += std::string(f.key) + " = " + render(f.value) + "\n";
    }
    return out;
}

Config load_config(const std::optional<std::string>& path,
                   const std::vector<std::string>& overrides,
                   const std::function<void(Config&)>& after_file) {
    Config config = default_config();
    if (path) apply_toml_file(config, *path);
    if (after_file) after_file(config);
    const Config from_file = config;
    for (const std::string& assignment : overrides) apply_override(config, assignment);
    // A run's own config.toml (to_toml's) was accepted when the run started, with every key: a
    // key that changes nothing there was the trained model's, and must not make the run
    // unreadable. Only what the overrides change meets the idle-key rule (validate_effects.hpp).
    std::optional<IdleKeysGiven> only_overrides;
    std::string first_line;
    if (path && std::getline(std::ifstream(*path), first_line) && first_line == kResolvedHeader)
        only_overrides.emplace(keys_changed(from_file, config));
    validate(config);
    return config;
}

std::string config_difference(const Config& there, const Config& now) {
    Config a = there, b = now;  // the key table hands out mutable pointers
    const std::vector<Field> fa = config_fields(a), fb = config_fields(b);
    for (size_t i = 0; i < fa.size(); ++i) {
        const std::string was = render(fa[i].value), is = render(fb[i].value);
        if (was != is) return fa[i].name() + " is " + was + " there but " + is + " now";
    }
    return "";
}

bool operator==(const Config& a, const Config& b) {
    Config ca = a, cb = b;
    const std::vector<Field> fa = config_fields(ca), fb = config_fields(cb);
    for (size_t i = 0; i < fa.size(); ++i) {
        const bool same = std::visit(
            [&](auto x) {
                using P = decltype(x);
                if constexpr (std::is_same_v<P, EnumField>)
                    return x.get() == std::get<P>(fb[i].value).get();
                else
                    return *x == *std::get<P>(fb[i].value);
            },
            fa[i].value);
        if (!same) return false;
    }
    return true;
}

}  // namespace rf
