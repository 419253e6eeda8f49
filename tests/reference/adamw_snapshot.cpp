// The expected values of tests/lesson/test_adamw.cpp "adamw: several steps …": the case of
// tests/lesson/adamw_case.hpp run through the textbook AdamW loop, in double, written as the
// header tests/lesson/adamw_expected.hpp. The test compares the library against these numbers,
// so the loop itself is not handed out to the students (a handout holds the header only).
//
//   build/tests/adamw_snapshot > tests/lesson/adamw_expected.hpp    write it again
//   build/tests/adamw_snapshot --check tests/lesson/adamw_expected.hpp
//       (ctest adamw_snapshot) PASS when the file holds the numbers this loop gives now
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "lesson/adamw_case.hpp"

namespace {

using namespace adamw_case;

// θ after each step: [step][parameter][element], the weight w decayed, the bias b not.
std::vector<std::vector<std::vector<double>>> run() {
    std::vector<std::vector<double>> theta = {kW, kB}, m, v;
    for (const auto& p : theta) {
        m.emplace_back(p.size(), 0.0);
        v.emplace_back(p.size(), 0.0);
    }
    std::vector<std::vector<std::vector<double>>> after;
    for (size_t t = 1; t <= kLearningRates.size(); ++t) {
        const double lr = kLearningRates[t - 1];
        for (size_t p = 0; p < theta.size(); ++p)
            for (size_t j = 0; j < theta[p].size(); ++j) {
                const double g = grad_value(p, j, t);
                if (p == 0) theta[p][j] -= lr * kWeightDecay * theta[p][j];
                m[p][j] = kBeta1 * m[p][j] + (1 - kBeta1) * g;
                v[p][j] = kBeta2 * v[p][j] + (1 - kBeta2) * g * g;
                const double m_hat = m[p][j] / (1 - std::pow(kBeta1, double(t)));
                const double v_hat = v[p][j] / (1 - std::pow(kBeta2, double(t)));
                theta[p][j] -= lr * m_hat / (std::sqrt(v_hat) + kEps);
            }
        after.push_back(theta);
    }
    return after;
}

std::string header(const std::vector<std::vector<std::vector<double>>>& after) {
    std::ostringstream out;
    out << "// Written by tests/reference/adamw_snapshot.cpp (ctest adamw_snapshot checks it):\n"
           "// the weights after each step of the case in adamw_case.hpp, computed in double.\n"
           "#pragma once\n\n#include <vector>\n\nnamespace adamw_case {\n\n"
           "// kExpected[step][parameter][element], step 0 = after the first update\n"
           "const std::vector<std::vector<std::vector<double>>> kExpected = {\n";
    char number[32];
    for (const auto& step : after) {  // three numbers a line
        out << "    {";
        for (size_t p = 0; p < step.size(); ++p) {
            out << (p ? ",\n     {" : "{");
            for (size_t j = 0; j < step[p].size(); ++j) {
                std::snprintf(number, sizeof number, "%.17g", step[p][j]);
                out << (j == 0 ? "" : j % 3 ? ", " : ",\n      ") << number;
            }
            out << "}";
        }
        out << "},\n";
    }
    out << "};\n\n}  // namespace adamw_case\n";
    return out.str();
}

}  // namespace

int main(int argc, char** argv) {
    const auto after = run();
    if (argc == 1) {
        std::fputs(header(after).c_str(), stdout);
        return 0;
    }
    if (argc != 3 || std::string(argv[1]) != "--check") {
        std::fprintf(stderr, "usage: adamw_snapshot [--check FILE]\n");
        return 2;
    }
    // The numbers of the file, in order, against ours (to 1e-12: another libm may round the
    // last digit of pow differently).
    std::ifstream in(argv[2]);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t body = text.find("kExpected = {");
    std::vector<double> found;
    if (body != std::string::npos) {
        const std::regex number(R"([-+]?\d+\.?\d*(?:[eE][-+]?\d+)?)");
        for (std::sregex_iterator it(text.begin() + long(body), text.end(), number), end; it != end;
             ++it)
            found.push_back(std::stod(it->str()));
    }
    size_t k = 0, wrong = 0;
    for (const auto& step : after)
        for (const auto& p : step)
            for (double want : p) {
                if (k >= found.size() || std::abs(found[k] - want) > 1e-12 * (1 + std::abs(want)))
                    ++wrong;
                ++k;
            }
    if (wrong || found.size() != k) {
        std::printf("adamw_snapshot: FAIL: %s holds %zu numbers, %zu of the %zu expected differ: "
                    "write it again (build/tests/adamw_snapshot > %s)\n",
                    argv[2], found.size(), wrong, k, argv[2]);
        return 1;
    }
    std::printf("adamw_snapshot: PASS (%s: the %zu numbers the loop gives)\n", argv[2], k);
    return 0;
}
