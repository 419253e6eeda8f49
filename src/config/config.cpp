// Stage 7 — config: reading, overriding, checking and writing the run configuration.
//
// fields_of below is the key table of config.hpp (config_fields): the ONE list of
// "table.key → member of Config".
#include "config/config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <variant>

#include <toml++/toml.h>

#include "tensor/format.hpp"

namespace rf {
namespace {

// ---- the key table ------------------------------------------------------------------------
using Field = ConfigField;

std::vector<Field> fields_of(Config& c) {
    //  table       key           eval_time  member
    ModelConfig& m = c.model;
    PositionConfig& p = c.position;
    DataConfig& d = c.data;
    TrainConfig& t = c.train;
    return {
        {"model", "vocab_size", false, &m.vocab_size},
        {"model", "hidden", false, &m.hidden},
        {"model", "num_heads", false, &m.num_heads},
        {"model", "num_layers", false, &m.num_layers},
        {"model", "ffn", false, &m.ffn},
        {"model", "dropout", true, &m.dropout},
        {"model", "attention_dropout", true, &m.attention_dropout},
        {"model", "layer_norm_eps", false, &m.layer_norm_eps},
        {"model", "init_std", false, &m.init_std},
        {"position", "scheme", false, &p.scheme},
        {"position", "pairing", false, &p.pairing},
        {"position", "base", false, &p.base},
        {"position", "rotary_fraction", false, &p.rotary_fraction},
        {"position", "rotate_values", false, &p.rotate_values},
        {"position", "interpolation_factor", true, &p.interpolation_factor},
        {"position", "ntk_factor", true, &p.ntk_factor},
        {"position", "max_positions", false, &p.max_positions},
        {"position", "sinusoidal_scale", false, &p.sinusoidal_scale},
        {"data", "path", true, &d.path},
        {"data", "tokenizer", true, &d.tokenizer},
        {"data", "vocab_size", true, &d.vocab_size},
        {"data", "seq_len", true, &d.seq_len},
        {"data", "validation_fraction", true, &d.validation_fraction},
        {"data", "val_windows", true, &d.val_windows},
        {"data", "mask_prob", true, &d.mask_prob},
        {"train", "seed", true, &t.seed},
        {"train", "batch_size", true, &t.batch_size},
        {"train", "steps", true, &t.steps},
        {"train", "lr", true, &t.lr},
        {"train", "min_lr_ratio", true, &t.min_lr_ratio},
        {"train", "warmup_steps", true, &t.warmup_steps},
        {"train", "schedule", true, &t.schedule},
        {"train", "beta1", true, &t.beta1},
        {"train", "beta2", true, &t.beta2},
        {"train", "eps", true, &t.eps},
        {"train", "weight_decay", true, &t.weight_decay},
        {"train", "grad_clip", true, &t.grad_clip},
        {"train", "eval_every", true, &t.eval_every},
        {"train", "eval_batches", true, &t.eval_batches},
        {"train", "log_every", true, &t.log_every},
        {"train", "threads", true, &t.threads},
        {"train", "checkpoint_every", true, &t.checkpoint_every},
    };
}

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
std::string format_double(double x) { return format_shortest(x); }

std::string quote_toml(const std::string& s) {
    std::string out = "\"";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == '"') out += "\\\"";
        else if (ch == '\\') out += "\\\\";
        else if (ch == '\n') out += "\\n";
        else if (ch == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else out += ch;
    }
    return out + "\"";
}

std::string type_name(const toml::node& node) {
    switch (node.type()) {
        case toml::node_type::string: return "string";
        case toml::node_type::integer: return "integer";
        case toml::node_type::floating_point: return "float";
        case toml::node_type::boolean: return "boolean";
        case toml::node_type::table: return "table";
        case toml::node_type::array: return "array";
        default: return "date/time";
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
    std::visit(
        [&](auto* member) {
            using T = std::remove_pointer_t<decltype(member)>;
            if constexpr (std::is_same_v<T, size_t>) {
                if (!node.is_integer()) throw wrong("an integer");
                const int64_t v = node.as_integer()->get();
                if (v < 0) throw wrong("a non-negative integer");
                *member = static_cast<size_t>(v);
            } else if constexpr (std::is_same_v<T, double>) {
                if (node.is_floating_point()) *member = node.as_floating_point()->get();
                else if (node.is_integer()) *member = static_cast<double>(node.as_integer()->get());
                else throw wrong("a number");
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
        [](auto* value) -> std::string {
            using T = std::remove_pointer_t<decltype(value)>;
            if constexpr (std::is_same_v<T, size_t>) return std::to_string(*value);
            else if constexpr (std::is_same_v<T, double>) return format_double(*value);
            else if constexpr (std::is_same_v<T, bool>) return *value ? "true" : "false";
            else return quote_toml(*value);
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
    for (const Field& f : fields_of(scratch)) keys.push_back(full_key(f));
    return keys;
}

std::vector<ConfigField> config_fields(Config& config) { return fields_of(config); }

ConfigField find_config_field(Config& config, const std::string& name, const std::string& where) {
    const size_t dot = name.find('.');
    if (dot == std::string::npos)
        throw std::invalid_argument("'" + name + "'" + where + " is not a table.key name, e.g. train.lr");
    std::vector<Field> fields = fields_of(config);
    return find_field(fields, name.substr(0, dot), name.substr(dot + 1), where);
}

std::string render_value(const ConfigValue& value) { return render(value); }

std::map<std::string, std::string> model_signature(const Config& config) {
    Config copy = config;   // the key table hands out mutable pointers
    std::map<std::string, std::string> signature;
    for (const Field& f : fields_of(copy))
        if (!f.eval_time) signature[f.name()] = render(f.value);
    return signature;
}

void apply_toml_file(Config& config, const std::string& path,
                     const std::vector<std::string>& other_tables) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec))
        throw std::runtime_error("config file '" + path +
                                 "' not found; pass a path relative to the working directory, "
                                 "e.g. configs/tiny.toml");
    if (!fs::is_regular_file(path, ec))
        throw std::runtime_error("config file '" + path + "' is not a regular file");
    toml::table root;
    try {
        root = toml::parse_file(path);
    } catch (const toml::parse_error& e) {
        const auto& begin = e.source().begin;
        throw std::runtime_error(path + ":" + std::to_string(begin.line) + ":" +
                                 std::to_string(begin.column) + ": malformed TOML: " +
                                 std::string(e.description()));
    }
    std::vector<Field> fields = fields_of(config);
    for (auto&& [table_key, table_node] : root) {
        const std::string table(table_key.str());
        if (std::find(other_tables.begin(), other_tables.end(), table) != other_tables.end())
            continue;
        const std::string at = " in " + path + " (line " +
                               std::to_string(table_node.source().begin.line) + ")";
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
    std::vector<Field> fields = fields_of(config);
    const std::string where = " in --set " + name;
    Field& field = find_field(fields, name.substr(0, dot), name.substr(dot + 1), " in --set");

    // Strings may be written bare (data.path=data/x.txt) or quoted as in TOML.
    if (std::holds_alternative<std::string*>(field.value) &&
        (value.empty() || (value.front() != '"' && value.front() != '\''))) {
        *std::get<std::string*>(field.value) = value;
        return;
    }
    toml::table parsed;
    try {
        parsed = toml::parse("value = " + value);
    } catch (const toml::parse_error&) {
        const char* expected = std::visit(
            [](auto* member) {
                using T = std::remove_pointer_t<decltype(member)>;
                if constexpr (std::is_same_v<T, size_t>) return "an integer";
                else if constexpr (std::is_same_v<T, double>) return "a number";
                else if constexpr (std::is_same_v<T, bool>) return "true or false";
                else return "a string";
            },
            field.value);
        throw std::invalid_argument(name + " must be " + std::string(expected) + ", got '" +
                                    value + "'" + where);
    }
    if (parsed.size() != 1 || !parsed.contains("value"))
        throw std::invalid_argument("--set " + name + ": the value '" + value +
                                    "' is not a single TOML value");
    assign(field, *parsed.get("value"), where);
}

// ---- validation -------------------------------------------------------------------------------
namespace {
[[noreturn]] void invalid(const std::string& key, const std::string& message) {
    throw std::invalid_argument(key + " " + message);
}
void require_positive(const std::string& key, size_t v) {
    if (v == 0) invalid(key, "must be positive, got 0");
}
void require_positive(const std::string& key, double v) {
    if (!(v > 0) || !std::isfinite(v)) invalid(key, "must be a positive number, got " + format_double(v));
}
// lo <= v < hi (or lo < v < hi when open_low)
void require_range(const std::string& key, double v, double lo, double hi, bool open_low,
                   bool closed_high = false) {
    const bool low_ok = open_low ? v > lo : v >= lo;
    const bool high_ok = closed_high ? v <= hi : v < hi;
    if (!(low_ok && high_ok))
        invalid(key, "must be in " + std::string(open_low ? "(" : "[") + format_double(lo) +
                         ", " + format_double(hi) + (closed_high ? "]" : ")") + ", got " +
                         format_double(v));
}
void require_one_of(const std::string& key, const std::string& v,
                    const std::vector<std::string>& options) {
    if (std::find(options.begin(), options.end(), v) == options.end())
        invalid(key, "must be one of " + join(options) + ", got '" + v + "'");
}
}  // namespace

void validate(const Config& c) {
    const ModelConfig& m = c.model;
    if (m.vocab_size != 0 && m.vocab_size <= 5)
        invalid("model.vocab_size", "must be 0 (take it from the tokenizer) or larger than the 5 "
                                    "special tokens, got " + std::to_string(m.vocab_size));
    require_positive("model.hidden", m.hidden);
    require_positive("model.num_heads", m.num_heads);
    attention_head_size(m.hidden, m.num_heads);   // throws unless num_heads divides hidden
    require_positive("model.num_layers", m.num_layers);
    require_positive("model.ffn", m.ffn);
    require_range("model.dropout", m.dropout, 0.0, 1.0, false);
    require_range("model.attention_dropout", m.attention_dropout, 0.0, 1.0, false);
    require_positive("model.layer_norm_eps", m.layer_norm_eps);
    require_positive("model.init_std", m.init_std);

    validate_position_config(c.position, m.hidden, m.num_heads);

    const DataConfig& d = c.data;
    if (d.path.empty()) invalid("data.path", "must name a UTF-8 text file, got an empty string");
    require_one_of("data.tokenizer", d.tokenizer, {"bpe", "char"});
    if (d.vocab_size <= 5)
        invalid("data.vocab_size", "must be larger than the 5 special tokens, got " +
                                       std::to_string(d.vocab_size));
    if (d.seq_len < 2) invalid("data.seq_len", "must be at least 2, got " + std::to_string(d.seq_len));
    if (c.position.scheme == "learned" && d.seq_len > c.position.max_positions)
        invalid("data.seq_len", "= " + std::to_string(d.seq_len) +
                                    " exceeds position.max_positions = " +
                                    std::to_string(c.position.max_positions) +
                                    " (rows of the learned position table); raise "
                                    "position.max_positions or shorten data.seq_len");
    require_range("data.validation_fraction", d.validation_fraction, 0.0, 1.0, true);
    require_positive("data.val_windows", d.val_windows);
    require_range("data.mask_prob", d.mask_prob, 0.0, 1.0, true);

    const TrainConfig& t = c.train;
    require_positive("train.batch_size", t.batch_size);
    require_positive("train.steps", t.steps);
    require_positive("train.lr", t.lr);
    require_range("train.min_lr_ratio", t.min_lr_ratio, 0.0, 1.0, false, true);
    require_one_of("train.schedule", t.schedule, {"cosine", "linear", "constant"});
    require_range("train.beta1", t.beta1, 0.0, 1.0, false);
    require_range("train.beta2", t.beta2, 0.0, 1.0, false);
    require_positive("train.eps", t.eps);
    if (!(t.weight_decay >= 0) || !std::isfinite(t.weight_decay))
        invalid("train.weight_decay", "must be >= 0, got " + format_double(t.weight_decay));
    if (!(t.grad_clip >= 0) || !std::isfinite(t.grad_clip))
        invalid("train.grad_clip", "must be >= 0 (0 = no clipping), got " + format_double(t.grad_clip));
    require_positive("train.log_every", t.log_every);
}

std::string to_toml(const Config& config) {
    Config copy = config;  // the key table hands out mutable pointers
    std::string out = "# roformer configuration, fully resolved (every key)\n";
    std::string current;
    for (const Field& f : fields_of(copy)) {
        if (current != f.table) {
            out += "\n[" + std::string(f.table) + "]\n";
            current = f.table;
        }
        out += std::string(f.key) + " = " + render(f.value) + "\n";
    }
    return out;
}

Config load_config(const std::optional<std::string>& path,
                   const std::vector<std::string>& overrides) {
    Config config = default_config();
    if (path) apply_toml_file(config, *path);
    for (const std::string& assignment : overrides) apply_override(config, assignment);
    validate(config);
    return config;
}

bool operator==(const Config& a, const Config& b) {
    Config ca = a, cb = b;
    const std::vector<Field> fa = fields_of(ca), fb = fields_of(cb);
    for (size_t i = 0; i < fa.size(); ++i) {
        const bool same = std::visit(
            [&](auto* x) {
                using P = decltype(x);
                return *x == *std::get<P>(fb[i].value);
            },
            fa[i].value);
        if (!same) return false;
    }
    return true;
}

}  // namespace rf
