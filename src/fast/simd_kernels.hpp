// Room — fast: the bodies of the fast path's element-wise kernels (the table is in
// simd_table.hpp), written once over an xsimd architecture and compiled once per instruction
// set: simd_sse2.cpp (the build's baseline flags), simd_avx2.cpp (-mavx2 -mfma) and
// simd_avx512.cpp (-mavx512f -mavx512cd -mavx512bw -mavx512vl -mavx512dq), each making one table.
//
// The One Definition Rule, and why everything below sits in an anonymous namespace: an inline
// function or template instance compiled in two files is emitted in both as a weak symbol,
// and the linker keeps one copy for every caller. If one copy was compiled with -mavx512f, an
// SSE2-only caller may end up running AVX-512 instructions (a crash on a CPU without them),
// or the AVX-512 kernel may silently run the SSE2 copy. So: these bodies have internal
// linkage (each file gets its own), they call no inline helper of another header except
// xsimd's, whose instances carry the architecture in their names (batch<float, avx2> and
// batch<float, sse2> are different types), and the tail loops use plain loops, not <algorithm>.
// tests/machinery/cli_simd_symbols.sh checks the compiled files: every weak symbol of a wide file names
// its architecture.
//
// Legend: L = lanes (Reals per register); a loop over whole lanes, then the tail one by one.
#pragma once

#include <xsimd/xsimd.hpp>

#include "fast/xsimd_compat.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "fast/simd_table.hpp"

namespace rf {
namespace {  // internal linkage in each ISA's file (see above)

template <class Arch>
struct Kernels {
    using Lanes = xsimd::batch<Real, Arch>;
    static constexpr size_t L = Lanes::size;

    static Lanes load(const Real* p) { return Lanes::load_unaligned(p); }

    static Real lane_max(const Lanes& x) {  // xsimd 8 has hadd but no horizontal max
        alignas(64) Real lanes[L];
        x.store_aligned(lanes);
        Real m = lanes[0];
        for (size_t i = 1; i < L; ++i) m = m < lanes[i] ? lanes[i] : m;
        return m;
    }

    // Φ(x) = ½·erfc(−x/√2) and the density φ(x) = e^{−x²/2}/√(2π), lane by lane
    static Lanes normal_cdf(const Lanes& x) {
        return Real(0.5) * xsimd::erfc(Real(-0.70710678118654752440) * x);
    }
    static Lanes normal_pdf(const Lanes& x) {
        return Real(0.39894228040143267794) * xsimd::exp(Real(-0.5) * x * x);
    }

    static void gelu_forward(const Real* in, Real* out, Real* cdf, size_t n) {
        size_t i = 0;
        for (; i + L <= n; i += L) {
            const Lanes v = load(in + i);
            const Lanes c = normal_cdf(v);
            (v * c).store_unaligned(out + i);
            if (cdf) c.store_unaligned(cdf + i);
        }
        for (; i < n; ++i) {
            const Real c = Real(0.5) * std::erfc(Real(-0.70710678118654752440) * in[i]);
            out[i] = in[i] * c;
            if (cdf) cdf[i] = c;
        }
    }

    static void gelu_backward(const Real* x, const Real* cdf, const Real* dy, Real* dx, size_t n) {
        size_t i = 0;
        for (; i + L <= n; i += L) {
            const Lanes xv = load(x + i);
            const Lanes local = load(cdf + i) + xv * normal_pdf(xv);
            (load(dx + i) + load(dy + i) * local).store_unaligned(dx + i);
        }
        for (; i < n; ++i) {
            const Real pdf = Real(0.39894228040143267794) * std::exp(Real(-0.5) * x[i] * x[i]);
            dx[i] += dy[i] * (cdf[i] + x[i] * pdf);
        }
    }

    // The row sums run lane by lane, then across lanes, then the tail.
    static void add_layer_norm_row(const Real* x, const Real* r, const Real* gamma,
                                   const Real* beta, Real eps, size_t C, Real* s, Real* y,
                                   Real* stats) {
        Lanes acc(Real(0));
        size_t j = 0;
        for (; j + L <= C; j += L) {
            const Lanes sj = load(x + j) + load(r + j);
            sj.store_unaligned(s + j);
            acc += sj;
        }
        Real total = lane_sum(acc);
        for (; j < C; ++j) total += (s[j] = x[j] + r[j]);
        const Real mean = total / Real(C);
        Lanes sq(Real(0));
        for (j = 0; j + L <= C; j += L) {
            const Lanes d = load(s + j) - mean;
            sq += d * d;
        }
        Real var = lane_sum(sq);
        for (; j < C; ++j) var += (s[j] - mean) * (s[j] - mean);
        const Real rstd = Real(1) / std::sqrt(var / Real(C) + eps);
        for (j = 0; j + L <= C; j += L)
            ((load(s + j) - mean) * rstd * load(gamma + j) + load(beta + j)).store_unaligned(y + j);
        for (; j < C; ++j) y[j] = (s[j] - mean) * rstd * gamma[j] + beta[j];
        stats[0] = mean;
        stats[1] = rstd;
    }

    static void add_layer_norm_row_backward(const Real* s, const Real* dy, const Real* gamma,
                                            Real mean, Real rstd, size_t C, Real* dx, Real* dr,
                                            double* dgamma, double* dbeta) {
        Lanes acc_g(Real(0)), acc_gx(Real(0));
        size_t j = 0;
        for (; j + L <= C; j += L) {
            const Lanes xhat = (load(s + j) - mean) * rstd;
            const Lanes g = load(dy + j) * load(gamma + j);
            acc_g += g;
            acc_gx += g * xhat;
        }
        Real sum_g = lane_sum(acc_g), sum_gx = lane_sum(acc_gx);
        for (; j < C; ++j) {
            const Real xhat = (s[j] - mean) * rstd, g = dy[j] * gamma[j];
            sum_g += g;
            sum_gx += g * xhat;
        }
        for (j = 0; j < C; ++j) {
            const Real xhat = (s[j] - mean) * rstd;
            dgamma[j] += double(dy[j]) * xhat;
            dbeta[j] += dy[j];
        }
        const Real g_mean = sum_g / Real(C), gx_mean = sum_gx / Real(C);
        for (j = 0; j + L <= C; j += L) {
            const Lanes xhat = (load(s + j) - mean) * rstd;
            const Lanes d = rstd * (load(dy + j) * load(gamma + j) - g_mean - xhat * gx_mean);
            if (dx) (load(dx + j) + d).store_unaligned(dx + j);
            if (dr) (load(dr + j) + d).store_unaligned(dr + j);
        }
        for (; j < C; ++j) {
            const Real xhat = (s[j] - mean) * rstd;
            const Real d = rstd * (dy[j] * gamma[j] - g_mean - xhat * gx_mean);
            if (dx) dx[j] += d;
            if (dr) dr[j] += d;
        }
    }

    static void softmax_row(Real* s, size_t n, size_t T, Real scale) {
        const size_t whole = n - n % L;
        Lanes top(-std::numeric_limits<Real>::infinity());
        for (size_t j = 0; j < whole; j += L) {
            const Lanes x = load(s + j) * scale;
            x.store_unaligned(s + j);
            top = xsimd::max(top, x);
        }
        Real m = lane_max(top);
        for (size_t j = whole; j < n; ++j) {
            s[j] *= scale;
            m = m < s[j] ? s[j] : m;
        }
        Lanes sum(Real(0));
        for (size_t j = 0; j < whole; j += L) {
            const Lanes e = xsimd::exp(load(s + j) - m);
            e.store_unaligned(s + j);
            sum += e;
        }
        Real total = lane_sum(sum);
        for (size_t j = whole; j < n; ++j) total += (s[j] = std::exp(s[j] - m));
        const Real inv = Real(1) / total;
        for (size_t j = 0; j < whole; j += L) (load(s + j) * inv).store_unaligned(s + j);
        for (size_t j = whole; j < n; ++j) s[j] *= inv;
        for (size_t j = n; j < T; ++j) s[j] = Real(0);
    }

    static void softmax_row_backward(const Real* p, Real* dp, size_t n, size_t T, Real scale) {
        const size_t whole = n - n % L;
        Lanes acc(Real(0));
        for (size_t j = 0; j < whole; j += L) acc += load(dp + j) * load(p + j);
        Real dot = lane_sum(acc);
        for (size_t j = whole; j < n; ++j) dot += dp[j] * p[j];
        for (size_t j = 0; j < whole; j += L)
            ((load(p + j) * (load(dp + j) - dot)) * scale).store_unaligned(dp + j);
        for (size_t j = whole; j < n; ++j) dp[j] = (p[j] * (dp[j] - dot)) * scale;
        for (size_t j = n; j < T; ++j) dp[j] = Real(0);
    }

    struct SwapPairs {  // lane i takes lane i ^ 1: (x1, x0, x3, x2, …)
        static constexpr unsigned get(unsigned i, unsigned) { return i ^ 1u; }
    };
    using LaneIndex = xsimd::batch<std::conditional_t<sizeof(Real) == 4, uint32_t, uint64_t>, Arch>;

    static void rope_rows_interleaved(Real* x, size_t T, size_t D, size_t r, const Real* cos2,
                                      const Real* sin2, Real sin_sign) {
        constexpr auto swap = lane_constant<LaneIndex, SwapPairs>();
        for (size_t t = 0; t < T; ++t) {
            Real* row = x + t * D;
            const Real* c = cos2 + t * r;
            const Real* s = sin2 + t * r;
            size_t j = 0;
            for (; j + L <= r; j += L) {
                const Lanes v = load(row + j);
                (v * load(c + j) + xsimd::swizzle(v, swap) * (load(s + j) * sin_sign))
                    .store_unaligned(row + j);
            }
            for (; j < r; j += 2) {  // c[j] = c[j+1] = cos, −s[j] = s[j+1] = sin
                const Real lo = row[j], hi = row[j + 1], si = sin_sign * s[j + 1];
                row[j] = c[j] * lo - si * hi;
                row[j + 1] = si * lo + c[j] * hi;
            }
        }
    }

    static void rope_rows_half(Real* x, size_t T, size_t D, size_t r, const Real* cos,
                               const Real* sin, Real sin_sign) {
        const size_t h = r / 2;
        for (size_t t = 0; t < T; ++t) {
            Real* lo = x + t * D;
            Real* hi = lo + h;
            const Real* c = cos + t * h;
            const Real* s = sin + t * h;
            size_t i = 0;
            for (; i + L <= h; i += L) {
                const Lanes xl = load(lo + i), xh = load(hi + i), ci = load(c + i),
                            si = load(s + i) * sin_sign;
                (ci * xl - si * xh).store_unaligned(lo + i);
                (si * xl + ci * xh).store_unaligned(hi + i);
            }
            for (; i < h; ++i) {
                const Real xl = lo[i], xh = hi[i], si = sin_sign * s[i];
                lo[i] = c[i] * xl - si * xh;
                hi[i] = si * xl + c[i] * xh;
            }
        }
    }

    static void adamw_update(Real* w, const Real* g, Real* m, Real* v, size_t n,
                             const AdamWScalars& k) {
        const Lanes b1(k.b1), c1(k.one_minus_b1), b2(k.b2), c2(k.one_minus_b2), step(k.step),
            inv_c2(k.inv_c2), eps(k.eps), shrink(k.shrink);
        size_t j = 0;
        for (; j + L <= n; j += L) {
            const Lanes gj = load(g + j);
            const Lanes mj = b1 * load(m + j) + c1 * gj;
            const Lanes vj = b2 * load(v + j) + c2 * (gj * gj);
            mj.store_unaligned(m + j);
            vj.store_unaligned(v + j);
            (load(w + j) * shrink - step * mj / (xsimd::sqrt(vj * inv_c2) + eps))
                .store_unaligned(w + j);
        }
        for (; j < n; ++j) {
            const Real gj = g[j];
            const Real mj = k.b1 * m[j] + k.one_minus_b1 * gj;
            const Real vj = k.b2 * v[j] + k.one_minus_b2 * (gj * gj);
            m[j] = mj;
            v[j] = vj;
            w[j] = w[j] * k.shrink - k.step * mj / (std::sqrt(vj * k.inv_c2) + k.eps);
        }
    }

    static SimdKernels table(const char* name) {
        return {name,
                L,
                &gelu_forward,
                &gelu_backward,
                &add_layer_norm_row,
                &add_layer_norm_row_backward,
                &softmax_row,
                &softmax_row_backward,
                &rope_rows_interleaved,
                &rope_rows_half,
                &adamw_update};
    }
};

}  // namespace
}  // namespace rf
