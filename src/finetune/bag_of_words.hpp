// Room — finetune: the bag-of-words floor — what a linear model on token counts gets, with no
// word order, no context and no pre-training. Fine-tuning earns its keep by beating it.
//
//   x_j = count of token j in the example (a pair: a's and b's tokens in separate halves
//         of the feature vector, so "which words are in b" is visible), then x / ‖x‖₂, so
//         every example has length 1 whatever its length or tokenizer (a char tokenizer's
//         counts run to dozens)
//   logits = W·x + c     W:[K, F]   mean softmax cross-entropy + (l2/2)‖W‖²
// trained by full-batch accelerated gradient descent (Nesterov 1983) with a step that provably
// cannot overshoot: the softmax Hessian diag(p) − ppᵀ ≼ ½·I (Böhning 1992, "Multinomial
// logistic regression algorithm", Ann. Inst. Statist. Math. 44), so the mean loss's Hessian is
// ≼ ½·A ⊗ I with A = (1/N) Σ x̃x̃ᵀ, x̃ = (x, 1); A has no negative entry, so A ≼ diag(A·1)
// (what is left is diagonally dominant). The step is D⁻¹·gradient with D = ½·diag(A·1) + l2:
// the largest safe step for every feature separately (a rare word moves as far as a common
// one). Momentum restarts whenever it points uphill (O'Donoghue & Candès 2015). It stops when
// the gradient's norm is below `tolerance` (converged) or after max_iterations (not converged —
// the caller says so). No randomness: the same examples give the same model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rf {

struct BagOfWordsOptions {
    size_t max_iterations = 2000;
    double tolerance = 1e-3;  // ‖∇(mean loss)‖₂ below this: converged
    double l2 = 1e-4;
};

struct BagOfWordsFit {
    bool converged = false;
    size_t iterations = 0;
    double gradient_norm = 0;  // at the end
    double loss = 0;           // the mean training loss (with the L2 term) at the end
};

class BagOfWords {
public:
    // features: F = the tokenizer's vocabulary size (×2 for pairs), K classes.
    BagOfWords(size_t features, size_t num_classes);
    // examples: sparse token lists (feature indices, repeated for counts); labels: class ids.
    BagOfWordsFit fit(const std::vector<std::vector<int>>& examples,
                      const std::vector<int>& labels, const BagOfWordsOptions& options = {});
    std::vector<double> logits(const std::vector<int>& example) const;
    int predict(const std::vector<int>& example) const;

private:
    struct Sparse {
        std::vector<size_t> index;
        std::vector<double> value;
    };
    Sparse normalised(const std::vector<int>& example) const;  // counts / ‖counts‖₂
    size_t features_, classes_;
    std::vector<double> w_;  // W as [F, K], then c: [K] (one parameter vector)
};

}  // namespace rf
