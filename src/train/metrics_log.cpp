// Stage 7 — train: metrics.csv and the train-loss window (see metrics_log.hpp).
#include "train/metrics_log.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "tensor/format.hpp"

namespace rf {

static const char* kMetricsHeader =
    "step,tokens,train_loss,val_loss,val_accuracy,lr,grad_norm,tokens_per_s,elapsed_s";

MetricsLog::MetricsLog(const std::string& path, bool resume, size_t resume_step) {
    if (!resume) {
        std::ofstream(path) << kMetricsHeader << "\n";
    } else {  // keep the header and the rows up to resume_step
        std::ifstream in(path);
        std::vector<std::string> kept;
        std::string line;
        while (std::getline(in, line)) {
            if (kept.empty()) {
                kept.push_back(line);
                continue;
            }
            const size_t row_step = std::stoull(line.substr(0, line.find(',')));
            if (row_step > resume_step) break;
            kept.push_back(line);
            elapsed_before_ = std::stod(line.substr(line.rfind(',') + 1));
        }
        if (kept.empty()) kept.push_back(kMetricsHeader);  // killed before its first row
        std::ofstream out(path, std::ios::trunc);
        for (const std::string& l : kept) out << l << "\n";
    }
    file_.open(path, std::ios::app);
    if (!file_) throw std::runtime_error("cannot append to " + path);
}

void MetricsLog::append(const MetricsRow& r) {
    file_ << r.step << "," << r.tokens << "," << format_fixed(r.train_loss, 6) << ","
          << (r.eval ? format_fixed(r.eval->loss, 6) : "") << ","
          << (r.eval ? format_fixed(r.eval->accuracy, 6) : "") << "," << format_printf("%g", r.lr)
          << "," << format_fixed(r.grad_norm, 6) << "," << format_fixed(r.tokens_per_s, 1) << ","
          << format_fixed(r.elapsed_s, 3) << "\n";
    file_.flush();
}

double LossWindow::tokens_per_s(double now_s, size_t tokens_per_step) const {
    return double(steps_ * tokens_per_step) / std::max(1e-9, now_s - start_s_);
}

void LossWindow::reset(double now_s) {
    loss_sum_ = 0;
    loss_count_ = 0;
    steps_ = 0;
    start_s_ = now_s;
}

std::map<std::string, std::string> LossWindow::to_metadata() const {
    return {{"train_loss_sum", format_printf("%a", loss_sum_)},
            {"train_loss_count", std::to_string(loss_count_)}};
}

void LossWindow::restore(const std::map<std::string, std::string>& metadata) {
    if (!metadata.count("train_loss_sum")) return;
    loss_sum_ = std::strtod(metadata.at("train_loss_sum").c_str(), nullptr);
    loss_count_ = std::stoull(metadata.at("train_loss_count"));
}

}  // namespace rf
