// Stage 1 — tensor: a value, its gradient, and the node that produced it.
//
// A Tensor is a cheap handle (shared_ptr) to TensorImpl. Copying a Tensor copies the handle,
// so the graph is built from handles: an op stores its inputs' handles in the output's Node,
// and Tensor::backward() walks those edges in reverse topological order.
//
// Scalar type: `Real` is float (float32) in the library everyone uses. The gradient-check
// tests link a second build of the same sources with RF_DOUBLE defined, where Real = double,
// so central differences are taken in true double precision (see tests/gradcheck/gradcheck.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensor/xtensor_headers.hpp"  // xt::xarray

#include "tensor/real.hpp"

namespace rf {

using Array = xt::xarray<Real>;  // row-major, always contiguous in this library
using Shape = std::vector<size_t>;

std::string shape_str(const Shape& shape);  // "[2, 3, 4]"

struct TensorImpl;
class Tensor;

// Node: how an output was made. `backward` reads out.grad and ACCUMULATES (+=) into the
// grads of the parents that require grad; it never assigns, so fan-out works.
struct Node {
    const char* op = "";                            // "matmul", "add", ... for messages
    std::vector<Tensor> parents;                    // the op's inputs
    std::function<void(TensorImpl& out)> backward;  // local chain rule
};

struct TensorImpl {
    Array data;
    Array grad;  // empty (size 0, dim 0) until first needed
    bool requires_grad = false;
    std::shared_ptr<Node> node;  // null for leaves and for results made in no-grad mode
    std::string name;            // optional, for parameters and messages
};

class Tensor {
public:
    Tensor();  // undefined: no value yet
    explicit Tensor(Array data, bool requires_grad = false);
    explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

    static Tensor zeros(const Shape& shape, bool requires_grad = false);
    static Tensor full(const Shape& shape, Real value, bool requires_grad = false);
    static Tensor scalar(Real value, bool requires_grad = false);

    bool defined() const;
    Shape shape() const;
    size_t dim() const;
    size_t size(int axis) const;  // negative axis counts from the end
    size_t numel() const;

    Array& value();
    const Array& value() const;
    Real* data();
    const Real* data() const;
    Real item() const;  // the value of a one-element tensor

    bool requires_grad() const;
    Tensor& set_requires_grad(bool flag);
    // The gradient buffer, allocated as zeros of the value's shape on first use.
    Array& grad();
    bool has_grad() const;
    void zero_grad();  // drops the gradient buffer to zeros

    const std::string& name() const;
    Tensor& set_name(std::string name);

    // Reverse-mode autodiff. Without an argument the tensor must hold one element (d self = 1).
    void backward();
    void backward(const Array& dout);

    Tensor detach() const;  // same values (copied), no history, no grad
    const std::shared_ptr<Node>& node() const;
    TensorImpl* impl() const;

private:
    std::shared_ptr<TensorImpl> impl_;
};

// ---- grad mode --------------------------------------------------------------------------
// While a NoGradGuard lives, ops record no graph (evaluation, optimizer updates).
bool grad_enabled();
class NoGradGuard {
public:
    NoGradGuard();
    ~NoGradGuard();
    NoGradGuard(const NoGradGuard&) = delete;
    NoGradGuard& operator=(const NoGradGuard&) = delete;

private:
    bool previous_;
};

// ---- helpers for writing ops ------------------------------------------------------------
// True when grad mode is on and any input requires grad: only then is a Node recorded.
bool any_requires_grad(std::initializer_list<const Tensor*> inputs);
bool any_requires_grad(const std::vector<Tensor>& inputs);

// Wraps `data` as the op's output. If any parent requires grad (and grad mode is on) the
// output requires grad and remembers `backward`; otherwise no node is kept.
Tensor make_result(Array data, std::vector<Tensor> parents, const char* op,
                   std::function<void(TensorImpl& out)> backward);

// Grad buffer of a parent if it wants one, else nullptr: `if (auto* g = grad_of(a)) *g += ...`.
Array* grad_of(Tensor& t);

// ---- watching the engine ------------------------------------------------------------------
// An observer the engine tells what it is doing: `roformer train --profile` installs one
// (src/inspect/profile.hpp) to time every op. None by default, and then make_result costs
// the engine one test of a pointer. The engine does not know who watches.
class EngineObserver {
public:
    virtual ~EngineObserver() = default;
    // make_result was called for `op`: the op has just computed its output.
    virtual void forward_op(const char* op) = 0;
    // A named stretch of work begins / ends: each backward closure (named by its op) and any
    // phase a caller marks with ObservedScope. Not nested.
    virtual void begin(const char* name, bool backward) = 0;
    virtual void end() = 0;
};
// The process's observer (nullptr: none). Set it around the work to watch.
void set_engine_observer(EngineObserver* observer);
EngineObserver* engine_observer();

// Marks a named stretch for the observer, if there is one: `const ObservedScope s("optimizer");`
class ObservedScope {
public:
    explicit ObservedScope(const char* name, bool backward = false)
        : observer_(engine_observer()) {
        if (observer_) observer_->begin(name, backward);
    }
    ~ObservedScope() {
        if (observer_) observer_->end();
    }
    ObservedScope(const ObservedScope&) = delete;
    ObservedScope& operator=(const ObservedScope&) = delete;

private:
    EngineObserver* observer_;
};

}  // namespace rf
