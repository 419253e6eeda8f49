// Room — experiments: learning curves as CSV (see curves.hpp).
#include "experiments/curves.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "experiments/report.hpp"
#include "run/checkpoint.hpp"

namespace rf {

namespace fs = std::filesystem;

// ---- CSV files ----------------------------------------------------------------------------
static std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    return cells;
}

static size_t column(const std::vector<std::string>& header, const std::string& name,
                     const std::string& path) {
    for (size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return i;
    throw std::runtime_error(path + " has no column '" + name +
                             "'; is it a roformer metrics/curves file?");
}

std::vector<CurvePoint> read_run_curve(const std::string& run_dir) {
    const std::string path = run_file(run_dir, "metrics.csv");
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("cannot read " + path + "; is '" + run_dir + "' a run directory?");
    std::string line;
    std::getline(in, line);
    const auto header = split_csv_line(line);
    const size_t c_step = column(header, "step", path),
                 c_train = column(header, "train_loss", path),
                 c_val = column(header, "val_loss", path),
                 c_acc = column(header, "val_accuracy", path);
    std::vector<CurvePoint> curve;
    while (std::getline(in, line)) {
        const auto cells = split_csv_line(line);
        if (cells.size() <= c_acc || cells[c_val].empty()) continue;
        curve.push_back({std::stoull(cells[c_step]), std::stod(cells[c_train]),
                         std::stod(cells[c_val]), std::stod(cells[c_acc])});
    }
    return curve;
}

void write_curves_csv(const std::string& path, const std::vector<CurveRow>& rows) {
    std::string out = std::string(kCurvesHeader) + "\n";
    char buffer[160];
    for (const CurveRow& r : rows) {
        std::snprintf(buffer, sizeof buffer, "%s,%zu,%zu,%.6f,%.6f,%.6f\n", r.scheme.c_str(),
                      r.seed, r.point.step, r.point.train_loss, r.point.val_loss,
                      r.point.val_accuracy);
        out += buffer;
    }
    write_output_file(path, out, csv_rule("curves.csv"));
}

std::vector<CurveRow> read_curves_csv(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::string line;
    std::getline(in, line);
    const auto header = split_csv_line(line);
    const size_t c_scheme = column(header, "scheme", path), c_seed = column(header, "seed", path),
                 c_step = column(header, "step", path),
                 c_train = column(header, "train_loss", path),
                 c_val = column(header, "val_loss", path),
                 c_acc = column(header, "val_accuracy", path);
    std::vector<CurveRow> rows;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        const auto c = split_csv_line(line);
        if (c.size() < header.size()) throw std::runtime_error(path + ": short row '" + line + "'");
        rows.push_back({c[c_scheme],
                        std::stoull(c[c_seed]),
                        {std::stoull(c[c_step]), std::stod(c[c_train]), std::stod(c[c_val]),
                         std::stod(c[c_acc])}});
    }
    return rows;
}

}  // namespace rf
