// Tests for the whole model — parity with an independent PyTorch reference, the llm.c way.
//
// Fixtures in tests/reference/ (docs/testing.md says how to regenerate them):
//   init.safetensors            written by OUR C++ (tests/lesson/test_parity_writers.cpp, by hand):
//                               the initial weights under HF names plus a fixed batch
//   init_favor.safetensors      written by OUR C++ (the same file): FAVOR's fixed projection
//                               W:[M, D] of each layer, for the favor cases
//   parity_<case>.safetensors   written by make_reference.py: PyTorch (float64) logits at the
//                               labelled rows, loss, every parameter gradient, and the losses,
//                               gradient norms and learning rates of 10 AdamW steps (the
//                               linear_* / clm_* cases also PyTorch's own float32 run); the
//                               favor cases also hold the W they used. Cases: the seven
//                               position schemes (softmax MLM), linear attention (elu1, favor;
//                               RoFormer eq. 19, and *_before: RoPE before the feature map)
//                               and causal LMs (clm_*: causal attention,
//                               next-token labels labels[t] = ids[t + 1], built here too)
// Each test loads init.safetensors into our float32 model, runs the same computation and
// compares every tensor with the criterion below. Legend: M labelled rows, V vocabulary.
//
// The criterion (1e-4 relative + 1e-5 of the tensor's scale) is written in tests/parity.hpp.
#include "parity.hpp"

using namespace rf;
using namespace rf::parity;

namespace {

// Every case runs on both paths: model.fused = true (the fused attention op, vectorised GELU,
// split products) and false (the composed ops).
void check_forward_backward(const std::string& scheme, bool fused) {
    const SafetensorsFile ref = load_fixture(scheme);
    Setup s = setup_from(ref);
    s.fast.fused = fused;
    auto model = build_model(s, ref);
    std::printf("parity %s (%s, %s%s%s, %s): forward + backward vs %s\n", scheme.c_str(),
                model->position().name().c_str(), enum_name(s.model.attention),
                s.model.attention == AttentionKind::linear
                    ? (std::string(" ") + enum_name(s.model.feature_map)).c_str()
                    : "",
                s.model.causal ? ", causal" : "", fused ? "fused" : "composed",
                meta(ref, "reference").c_str());
    const std::vector<Comparison> all = forward_backward_comparisons(*model, s, ref);
    // Same parameter set on both sides: PyTorch has no gradient we do not compare.
    size_t reference_gradients = 0;
    for (const NamedTensor& t : ref.tensors) reference_gradients += t.name.rfind("grad.", 0) == 0;
    CHECK(reference_gradients == model->parameters().size());
    CHECK(all.size() == 2 + model->parameters().size());
    for (const Comparison& c : all) {
        print(c);
        CHECK_MESSAGE(c.ok(), scheme << ": " << c.name << " differs from PyTorch: max abs "
                                     << c.max_abs << ", max rel " << c.max_rel << ", err/tol "
                                     << c.worst);
    }
}

void check_adamw(const std::string& scheme, bool fused) {
    const SafetensorsFile ref = load_fixture(scheme);
    Setup s = setup_from(ref);
    s.fast.fused = fused;
    auto model = build_model(s, ref);
    const Trajectory t = run_adamw(*model, s);
    std::printf("parity %s (%s): %zu AdamW steps (clip %g, lr %g, %zu warmup, %s)\n",
                scheme.c_str(), fused ? "fused" : "composed", s.train.steps, s.train.grad_clip,
                s.train.lr, s.train.warmup_steps, enum_name(s.train.schedule));
    for (size_t i = 0; i < t.losses.size(); ++i)
        std::printf("    loss[%2zu]  ours %.7f  torch %.7f\n", i, t.losses[i],
                    double(ref.at("adamw.loss").data.at(i)));
    const double factor = s.adamw_tolerance_factor;
    if (factor != 1)
        std::printf("  (tolerance × %g for this case's trajectory: make_reference.py says why)\n",
                    factor);
    for (const Comparison& c :
         {compare("adamw.loss", t.losses, ref.at("adamw.loss").data, 0, factor),
          compare("adamw.grad_norm", t.grad_norms, ref.at("adamw.grad_norm").data, 0, factor),
          compare("adamw.lr", t.lrs, ref.at("adamw.lr").data)}) {
        print(c);
        CHECK_MESSAGE(c.ok(), scheme << ": " << c.name << " differs from PyTorch: max abs "
                                     << c.max_abs << ", err/tol " << c.worst);
    }
    // For scale, not checked: PyTorch float32 against PyTorch float64 on the same steps.
    for (const char* name : {"adamw.loss", "adamw.grad_norm"})
        if (const NamedTensor* f32 = ref.find(std::string(name) + ".float32")) {
            Comparison c = compare(std::string(name) + " (PyTorch float32)",
                                   std::vector<double>(f32->data.begin(), f32->data.end()),
                                   ref.at(name).data, 0, factor);
            print(c);
        }
}

}  // namespace

// The cases make_reference.py writes; a missing fixture fails (read_safetensors throws).
#define RF_PARITY_CASES(scheme)                                                       \
    TEST_CASE("parity " scheme ": logits, loss and every gradient match PyTorch") {   \
        for (bool fused : {true, false}) check_forward_backward(scheme, fused);       \
    }                                                                                 \
    TEST_CASE("parity " scheme ": 10 AdamW steps follow PyTorch's loss trajectory") { \
        for (bool fused : {true, false}) check_adamw(scheme, fused);                  \
    }
RF_PARITY_CASES("rope_interleaved")
RF_PARITY_CASES("rope_half")
RF_PARITY_CASES("rope_values")
RF_PARITY_CASES("sinusoidal")
RF_PARITY_CASES("learned")
RF_PARITY_CASES("none")
RF_PARITY_CASES("alibi")
// Linear attention (RoFormer §3.3, eq. 19), bidirectional MLM
RF_PARITY_CASES("linear_elu1_learned")
RF_PARITY_CASES("linear_elu1_rope")
RF_PARITY_CASES("linear_favor_rope")
// Causal LMs: causal attention, next-token labels
RF_PARITY_CASES("clm_softmax_rope")
RF_PARITY_CASES("clm_elu1_rope_values")
RF_PARITY_CASES("clm_favor_rope")
// RoPE before the feature map (position.rope_placement = before_feature_map)
RF_PARITY_CASES("linear_elu1_rope_before")
RF_PARITY_CASES("linear_favor_rope_before")
RF_PARITY_CASES("clm_favor_rope_before")
RF_PARITY_CASES("clm_elu1_rope_before_values")
#undef RF_PARITY_CASES

TEST_CASE("parity can fail: a corrupted weight, gradient or schedule step is detected") {
    const SafetensorsFile ref = load_fixture("rope_interleaved");
    const Setup s = setup_from(ref);
    auto count_failures = [](const std::vector<Comparison>& all, std::string* first) {
        size_t n = 0;
        for (const Comparison& c : all)
            if (!c.ok() && n++ == 0 && first) *first = c.name;
        return n;
    };
    {  // the untouched model passes (so the failures below are caused by the corruption)
        auto model = build_model(s, ref);
        CHECK(count_failures(forward_backward_comparisons(*model, s, ref), nullptr) == 0);
    }
    SUBCASE("one weight element 1e-3 off") {
        auto model = build_model(s, ref);
        for (const NamedParameter& p : model->parameters())
            if (p.tensor.name() == "roformer.encoder.layer.1.attention.self.key.weight")
                Tensor(p.tensor).data()[5] += Real(1e-3);
        std::string first;
        const size_t failures =
            count_failures(forward_backward_comparisons(*model, s, ref), &first);
        MESSAGE("a 1e-3 change in one key weight makes "
                << failures << " tensors mismatch (first: " << first << ")");
        CHECK(failures > 0);
    }
    SUBCASE("one gradient element 1 % off") {
        auto model = build_model(s, ref);
        const std::string target = "roformer.encoder.layer.0.intermediate.dense.weight";
        std::vector<Comparison> all = forward_backward_comparisons(*model, s, ref, target);
        std::string first;
        CHECK(count_failures(all, &first) == 1);
        CHECK(first == "grad." + target);
    }
    SUBCASE("the schedule one step ahead changes the loss trajectory") {
        auto model = build_model(s, ref);
        const Trajectory t = run_adamw(*model, s, 1);
        const Comparison c = compare("adamw.loss", t.losses, ref.at("adamw.loss").data);
        MESSAGE("lr_at(step + 1): loss trajectory err/tol " << c.worst);
        CHECK(!c.ok());
    }
}
