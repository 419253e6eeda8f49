// Room — run: saving and loading checkpoints and run directories.
#include "run/checkpoint.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "assembly/swappable_ops_for.hpp"
#include "io/read_file.hpp"
#include "io/safetensors.hpp"
#include "run/checkpoint_commit.hpp"
#include "run/run_config.hpp"
#include "run/run_lock.hpp"

namespace rf {

namespace fs = std::filesystem;

std::string run_file(const std::string& run_dir, const std::string& name) {
    return (fs::path(run_dir) / name).string();
}

ModelConfig resolved_model_config(const Config& config, size_t tokenizer_vocab_size) {
    ModelConfig m = config.model;
    if (m.vocab_size == 0) m.vocab_size = tokenizer_vocab_size;
    m.causal = config.train.objective == data::Objective::clm;
    if (m.vocab_size < tokenizer_vocab_size)
        throw std::invalid_argument("model.vocab_size=" + std::to_string(m.vocab_size) +
                                    " is smaller than the tokenizer's " +
                                    std::to_string(tokenizer_vocab_size) +
                                    " tokens; set it to 0 to follow the tokenizer");
    // Larger: rows no token ever uses, never trained — and a prediction among them (fill-mask,
    // generate) would be an id with no text, found only in the middle of the output.
    if (m.vocab_size > tokenizer_vocab_size)
        throw std::invalid_argument("model.vocab_size=" + std::to_string(m.vocab_size) +
                                    " is larger than the tokenizer's " +
                                    std::to_string(tokenizer_vocab_size) +
                                    " tokens (ids it can never decode); set it to 0 to follow the "
                                    "tokenizer, or raise data.vocab_size");
    return m;
}

// A checkpoint's step (metadata text) as a number; a bad value names the file and the key.
static size_t parse_step(const std::string& text, const std::string& path) {
    size_t step = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, step);
    if (text.empty() || ec != std::errc() || ptr != end)
        throw std::runtime_error(path + ": __metadata__ \"step\" is '" + text +
                                 "', not a step number; the file is damaged — use another "
                                 "checkpoint or train again");
    return step;
}

// Weights or moments that are inf / nan would print nan probabilities and losses: refuse them.
static void require_finite(const NamedTensor& t, const std::string& path) {
    for (size_t i = 0; i < t.data.size(); ++i)
        if (!std::isfinite(t.data[i]))
            throw std::runtime_error(path + ": tensor '" + t.name + "' holds a non-finite value (" +
                                     std::to_string(t.data[i]) + " at element " +
                                     std::to_string(i) +
                                     "); the checkpoint is damaged or the run diverged — use an "
                                     "earlier checkpoint or train again with a lower train.lr");
}

// AdamW's moments under "<parameter>.exp_avg" / ".exp_avg_sq", its step in the metadata.
static std::string encode_optimizer(const AdamW& optimizer) {
    return optimizer_file_bytes(optimizer);
}

std::string optimizer_file_bytes(const AdamW& optimizer) {
    const AdamWState state = optimizer.export_state();
    std::vector<NamedTensor> moments;
    for (const AdamWState::Moments& m : state.params) {
        moments.push_back(
            {m.name + ".exp_avg", {m.m.size()}, std::vector<float>(m.m.begin(), m.m.end())});
        moments.push_back(
            {m.name + ".exp_avg_sq", {m.v.size()}, std::vector<float>(m.v.begin(), m.v.end())});
    }
    return encode_safetensors(
        "optimizer.safetensors", moments,
        {{"step", std::to_string(state.step)}, {"format", "roformer-cpp adamw"}});
}

void save_checkpoint(const std::string& run_dir, const RoFormer& model, const Config& config,
                     size_t step, const AdamW* optimizer,
                     const std::map<std::string, std::string>& extra) {
    std::vector<NamedTensor> tensors;
    for (const NamedParameter& p : model.parameters()) tensors.push_back(to_named_tensor(p.tensor));
    for (const Tensor& b : model.buffers()) tensors.push_back(to_named_tensor(b));  // FAVOR's W
    std::map<std::string, std::string> meta = extra;
    meta["format"] = "roformer-cpp";
    meta["step"] = std::to_string(step);
    const bool rope = config.position.scheme == PositionKind::rope;
    meta["position_scheme"] = enum_name(config.position.scheme);
    meta["pairing"] = rope ? enum_name(config.position.pairing) : "";
    meta["config"] = to_toml(config);
    meta["vocab_size"] = std::to_string(model.config().vocab_size);
    for (const auto& [key, value] : model_signature(config)) meta["model." + key] = value;
    mark_recorded(meta);  // checkpoint.json records it: a run with this model has a record
    CheckpointFiles files;
    files.emplace_back("model.safetensors",
                       encode_safetensors(run_file(run_dir, "model.safetensors"), tensors, meta));
    if (optimizer) files.emplace_back("optimizer.safetensors", encode_optimizer(*optimizer));
    commit_checkpoint(run_dir, step, files);
}

std::map<std::string, std::string> read_checkpoint_metadata(const std::string& path) {
    return read_safetensors(path).metadata;
}

// The weights of `file` (read from `path`) into `model`: load_model_weights, on bytes read once.
static size_t load_weights_from(RoFormer& model, const Config& config, const SafetensorsFile& file,
                                const std::string& path) {
    auto meta = [&](const std::string& key) {
        auto it = file.metadata.find(key);
        return it == file.metadata.end() ? std::string() : it->second;
    };
    if (meta("format") != "roformer-cpp")
        throw std::runtime_error(path + " is not a roformer-cpp model checkpoint (no format tag)");
    // Scheme and pairing first: a pairing mismatch would run silently and predict garbage.
    const std::string scheme = enum_name(config.position.scheme);
    const std::string pairing = enum_name(config.position.pairing);
    if (meta("position_scheme") != scheme)
        throw std::runtime_error(path +
                                 " was trained with position.scheme=" + meta("position_scheme") +
                                 " but the model uses " + scheme + "; load it with its own config");
    if (config.position.scheme == PositionKind::rope && meta("pairing") != pairing)
        throw std::runtime_error(path + " was trained with position.pairing=" + meta("pairing") +
                                 " but the model uses " + pairing +
                                 "; the two pairings are not interchangeable without permuting "
                                 "Wq/Wk rows");
    // A key the checkpoint does not record is older than the key: it was trained with the default.
    const auto defaults = model_signature(default_config());
    for (const auto& [key, value] : model_signature(config)) {
        const std::string saved =
            file.metadata.count("model." + key) ? meta("model." + key) : defaults.at(key);
        if (saved != value)
            throw std::runtime_error(path + " was trained with " + key + "=" + saved +
                                     " but the model has " + key + "=" + value);
    }
    for (const NamedParameter& p : model.parameters()) {
        Tensor target = p.tensor;
        const NamedTensor& saved = file.at(target.name(), path);
        require_finite(saved, path);
        copy_into(saved, target);
    }
    // Buffers (FAVOR's fixed projections): the model drew its own from the seed, but the
    // trained weights belong with the W they were trained with, so the file's copy wins.
    for (Tensor target : model.buffers()) {
        const NamedTensor* saved = file.find(target.name());
        if (!saved)
            throw std::runtime_error(path + " has no " + target.name() +
                                     ", the fixed random features of model.feature_map = favor; "
                                     "a favor model cannot run without the W it was trained with");
        require_finite(*saved, path);
        copy_into(*saved, target);
    }
    return meta("step").empty() ? 0 : parse_step(meta("step"), path);
}

size_t load_model_weights(RoFormer& model, const Config& config, const std::string& path) {
    return load_weights_from(model, config, read_safetensors(path), path);
}

void load_optimizer_state(AdamW& optimizer, const std::string& path) {
    const SafetensorsFile file = read_safetensors(path);
    AdamWState state;
    auto it = file.metadata.find("step");
    if (it == file.metadata.end()) throw std::runtime_error(path + " has no step in its metadata");
    state.step = parse_step(it->second, path);
    for (size_t i = 0; i < optimizer.parameters().size(); ++i) {
        const std::string& name = optimizer.name_of(i);
        const NamedTensor& m = file.at(name + ".exp_avg", path);
        const NamedTensor& v = file.at(name + ".exp_avg_sq", path);
        require_finite(m, path);
        require_finite(v, path);
        state.params.push_back({name, std::vector<Real>(m.data.begin(), m.data.end()),
                                std::vector<Real>(v.data.begin(), v.data.end())});
    }
    optimizer.import_state(state);
}

LoadedRun load_run(const std::string& run_dir, const std::vector<std::string>& overrides) {
    require_directory(run_dir, "run directory",
                      "pass the --out directory of a finished `roformer train`");
    // One read of checkpoint.json and of the model it commits, checked against each other and
    // against the run's own files (the tokenizer and config the model was trained with): the
    // step this run reports is the step of the weights it holds, even beside a live writer.
    const CommittedFile committed = read_committed_file(run_dir, "model.safetensors");
    for (const char* name : {"config.toml", "tokenizer.json", "model.safetensors"})
        if (!fs::exists(run_file(run_dir, name)))
            throw std::runtime_error("'" + run_file(run_dir, name) +
                                     "' is missing; is this a finished run directory?");
    LoadedRun run;
    std::vector<std::string> notes;  // said below, once the overrides are known to hold
    const Config saved = load_run_config(run_file(run_dir, "config.toml"), {}, &notes);
    run.config = load_run_config(run_file(run_dir, "config.toml"), overrides);
    // Anything that changes the model is refused; the loader below would refuse it too, but
    // this names the override the user typed.
    const auto before = model_signature(saved), after = model_signature(run.config);
    for (const auto& [key, value] : after)
        if (before.at(key) != value)
            throw std::invalid_argument("--set " + key + " changes the trained model (it was " +
                                        before.at(key) +
                                        "); only data.*, train.threads, "
                                        "position.interpolation_factor / ntk_factor and "
                                        "position.scaling with its knobs may change at "
                                        "evaluation");
    run.tokenizer = data::load_tokenizer(run_file(run_dir, "tokenizer.json"));
    const ModelConfig model_config = resolved_model_config(run.config, run.tokenizer->vocab_size());
    run.model =
        make_model(model_config, run.config.position, run.config.train.seed, run.config.fast);
    const std::string model_path = run_file(run_dir, "model.safetensors");
    // No bytes: not a regular file, which read_safetensors names (a FIFO, a device).
    run.step = load_weights_from(*run.model, run.config,
                                 committed.bytes.empty()
                                     ? read_safetensors(model_path)
                                     : parse_safetensors(committed.bytes, model_path),
                                 model_path);
    return run;
}

}  // namespace rf
