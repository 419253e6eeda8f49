// Stage 1 — tensor: storage, gradient buffers and the reverse-mode engine.
#include "tensor/tensor.hpp"

#include <stdexcept>
#include <unordered_set>

#include "tensor/xtensor_headers.hpp"  // xt::zeros, xt::ones


namespace rf {

std::string shape_str(const Shape& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// ---- construction -----------------------------------------------------------------------
Tensor::Tensor() = default;
bool Tensor::defined() const { return impl_ != nullptr; }
TensorImpl* Tensor::impl() const { return impl_.get(); }

Tensor::Tensor(Array data, bool requires_grad) : impl_(std::make_shared<TensorImpl>()) {
    impl_->data = std::move(data);
    impl_->requires_grad = requires_grad;
}

Tensor Tensor::zeros(const Shape& shape, bool requires_grad) {
    return Tensor(Array(xt::zeros<Real>(shape)), requires_grad);
}

Tensor Tensor::full(const Shape& shape, Real value, bool requires_grad) {
    Array a(shape);
    a.fill(value);
    return Tensor(std::move(a), requires_grad);
}

Tensor Tensor::scalar(Real value, bool requires_grad) {
    Array a = Array::from_shape({});
    a() = value;
    return Tensor(std::move(a), requires_grad);
}

// ---- accessors --------------------------------------------------------------------------
static TensorImpl& checked(const std::shared_ptr<TensorImpl>& p) {
    if (!p) throw std::logic_error("use of an undefined (default-constructed) Tensor");
    return *p;
}

Shape Tensor::shape() const {
    const auto& s = checked(impl_).data.shape();
    return Shape(s.begin(), s.end());
}
size_t Tensor::dim() const { return checked(impl_).data.dimension(); }
size_t Tensor::size(int axis) const {
    const int d = static_cast<int>(dim());
    const int a = axis < 0 ? axis + d : axis;
    if (a < 0 || a >= d)
        throw std::out_of_range("axis " + std::to_string(axis) + " is out of range for shape " +
                                shape_str(shape()));
    return impl_->data.shape()[static_cast<size_t>(a)];
}
size_t Tensor::numel() const { return checked(impl_).data.size(); }
Array& Tensor::value() { return checked(impl_).data; }
const Array& Tensor::value() const { return checked(impl_).data; }
Real* Tensor::data() { return checked(impl_).data.data(); }
const Real* Tensor::data() const { return checked(impl_).data.data(); }

Real Tensor::item() const {
    if (numel() != 1)
        throw std::invalid_argument("item() needs a one-element tensor, got shape " +
                                    shape_str(shape()));
    return *impl_->data.data();
}

bool Tensor::requires_grad() const { return checked(impl_).requires_grad; }
Tensor& Tensor::set_requires_grad(bool flag) {
    checked(impl_).requires_grad = flag;
    return *this;
}

Array& Tensor::grad() {
    TensorImpl& t = checked(impl_);
    if (t.grad.shape() != t.data.shape()) t.grad = Array(xt::zeros<Real>(t.data.shape()));
    return t.grad;
}
bool Tensor::has_grad() const {
    const TensorImpl& t = checked(impl_);
    return t.grad.shape() == t.data.shape();
}
void Tensor::zero_grad() {
    TensorImpl& t = checked(impl_);
    if (t.grad.shape() == t.data.shape()) t.grad.fill(Real(0));
}

const std::string& Tensor::name() const { return checked(impl_).name; }
Tensor& Tensor::set_name(std::string name) {
    checked(impl_).name = std::move(name);
    return *this;
}

Tensor Tensor::detach() const { return Tensor(Array(checked(impl_).data), false); }
const std::shared_ptr<Node>& Tensor::node() const { return checked(impl_).node; }

// ---- the engine -------------------------------------------------------------------------
// 1. Topologically sort every tensor reachable from `root` through Node::parents (iterative
//    DFS, post-order, so a tensor comes after all of its inputs).
// 2. Seed d(root) = dout, then visit the order in reverse: each node's backward adds its
//    contribution to its parents' grads. A tensor used by k ops receives k contributions
//    before it is itself visited, because every consumer comes later in the order.
static std::vector<TensorImpl*> topological_order(TensorImpl* root) {
    std::vector<TensorImpl*> order;
    std::unordered_set<TensorImpl*> visited;
    std::vector<std::pair<TensorImpl*, size_t>> stack{{root, 0}};
    visited.insert(root);
    while (!stack.empty()) {
        auto& [t, next_parent] = stack.back();
        const size_t n_parents = t->node ? t->node->parents.size() : 0;
        if (next_parent < n_parents) {
            TensorImpl* p = t->node->parents[next_parent++].impl();
            if (p->requires_grad && visited.insert(p).second) stack.push_back({p, 0});
        } else {
            order.push_back(t);
            stack.pop_back();
        }
    }
    return order;
}

void Tensor::backward() {
    if (numel() != 1)
        throw std::invalid_argument(
            "backward() without an upstream gradient needs a one-element tensor, got shape " +
            shape_str(shape()) + "; pass dout of the same shape");
    backward(Array(xt::ones<Real>(impl_->data.shape())));
}

void Tensor::backward(const Array& dout) {
    TensorImpl& root = checked(impl_);
    if (!root.requires_grad)
        throw std::logic_error(
            "backward() on a tensor that does not require grad (no input requires grad, or it "
            "was computed under NoGradGuard)");
    if (dout.shape() != root.data.shape()) {
        Shape d(dout.shape().begin(), dout.shape().end());
        throw std::invalid_argument("backward(dout): dout has shape " + shape_str(d) +
                                    " but the tensor has shape " + shape_str(shape()));
    }
    grad() += dout;
    const std::vector<TensorImpl*> order = topological_order(&root);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        TensorImpl* t = *it;
        if (!t->node || !t->node->backward || t->grad.shape() != t->data.shape()) continue;
        t->node->backward(*t);
    }
}

// ---- grad mode, the observer and op helpers --------------------------------------------------
static thread_local bool g_grad_enabled = true;
static EngineObserver* g_observer = nullptr;
void set_engine_observer(EngineObserver* observer) { g_observer = observer; }
EngineObserver* engine_observer() { return g_observer; }
bool grad_enabled() { return g_grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

bool any_requires_grad(std::initializer_list<const Tensor*> inputs) {
    if (!g_grad_enabled) return false;
    for (const Tensor* t : inputs)
        if (t->defined() && t->requires_grad()) return true;
    return false;
}
bool any_requires_grad(const std::vector<Tensor>& inputs) {
    if (!g_grad_enabled) return false;
    for (const Tensor& t : inputs)
        if (t.defined() && t.requires_grad()) return true;
    return false;
}

// Every op's edge of the graph is made here, through make_result: out remembers its parents and
// its backward closure (the fused and linear-attention ops too; nothing else creates a Node).
static Tensor record(Array data, std::vector<Tensor> parents, const char* op,
                     std::function<void(TensorImpl& out)> backward) {
    Tensor out(std::move(data), false);
    if (any_requires_grad(parents)) {
        auto node = std::make_shared<Node>();
        node->op = op;
        node->parents = std::move(parents);
        node->backward = std::move(backward);
        out.impl()->node = std::move(node);
        out.set_requires_grad(true);
    }
    return out;
}

// record() while an observer watches (--profile): it is told of the op, of the time spent
// recording it ("graph: record"), and of every call of the backward closure.
static Tensor watched(Array data, std::vector<Tensor> parents, const char* op,
                      std::function<void(TensorImpl& out)> backward) {
    EngineObserver* observer = g_observer;
    observer->forward_op(op);
    Tensor out = record(std::move(data), std::move(parents), op,
                        [observer, op, backward = std::move(backward)](TensorImpl& o) {
                            observer->begin(op, true);
                            backward(o);
                            observer->end();
                        });
    observer->forward_op("graph: record");
    return out;
}

Tensor make_result(Array data, std::vector<Tensor> parents, const char* op,
                   std::function<void(TensorImpl& out)> backward) {
    if (g_observer) return watched(std::move(data), std::move(parents), op, std::move(backward));
    return record(std::move(data), std::move(parents), op, std::move(backward));
}

Array* grad_of(Tensor& t) {
    if (!t.defined() || !t.requires_grad()) return nullptr;
    return &t.grad();
}

}  // namespace rf
