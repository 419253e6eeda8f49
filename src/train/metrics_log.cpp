// Room — train: metrics.csv and the train-loss window (see metrics_log.hpp).
#include "train/metrics_log.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <ostream>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "io/durable_file.hpp"
#include "tensor/format.hpp"

namespace rf {

static const char* kMetricsHeader =
    "step,tokens,train_loss,val_loss,val_accuracy,lr,grad_norm,tokens_per_s,elapsed_s";

MetricsLog::MetricsLog(const std::string& path, bool resume, size_t resume_step, std::ostream& warn)
    : path_(path), warn_(warn) {
    std::string kept = std::string(kMetricsHeader) + "\n";
    if (resume) {  // keep the header and the rows up to resume_step
        std::ifstream in(path);
        std::string line;
        std::getline(in, line);  // the header
        while (std::getline(in, line)) {
            // A row cut short (killed mid-write in an older version) ends the kept part.
            const size_t comma = line.find(',');
            if (comma == 0 || comma == std::string::npos ||
                line.find_first_not_of("0123456789") != comma)
                break;
            if (std::count(line.begin(), line.end(), ',') != 8) break;
            const size_t row_step = std::stoull(line.substr(0, comma));
            if (row_step > resume_step) break;
            kept += line + "\n";
            elapsed_before_ = std::strtod(line.c_str() + line.rfind(',') + 1, nullptr);
        }
    }
    write_file_atomically(path, kept);  // the old file or the kept rows, never a mix
    fd_ = open_for_append(path);  // through the run directory's lock: a rename cannot redirect it
    if (fd_ < 0)
        throw std::runtime_error("cannot append to '" + path + "' (" + std::strerror(errno) +
                                 "); check the run directory's permissions");
}

MetricsLog::~MetricsLog() {
    if (fd_ >= 0) ::close(fd_);
}

bool MetricsLog::write_pending() {
    size_t done = 0;
    while (done < pending_.size()) {
        const ssize_t n = ::write(fd_, pending_.data() + done, pending_.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            error_ = n < 0 ? errno : ENOSPC;
            break;
        }
        done += size_t(n);
    }
    pending_.erase(0, done);  // a row cut short continues here next time
    return pending_.empty();
}

void MetricsLog::append(const MetricsRow& r) {
    pending_ += std::to_string(r.step) + "," + std::to_string(r.tokens) + "," +
                format_fixed(r.train_loss, 6) + "," +
                (r.eval ? format_fixed(r.eval->loss, 6) : "") + "," +
                (r.eval ? format_fixed(r.eval->accuracy, 6) : "") + "," +
                format_printf("%g", r.lr) + "," + format_fixed(r.grad_norm, 6) + "," +
                format_fixed(r.tokens_per_s, 1) + "," + format_fixed(r.elapsed_s, 3) + "\n";
    if (write_pending()) {
        if (warned_) warn_ << "metrics.csv: the pending rows are written; no gap\n";
        warned_ = false;
        return;
    }
    if (!warned_)
        warn_ << "warning: cannot append to " << path_ << " (" << std::strerror(error_)
              << "); keeping its rows in memory and retrying — the next checkpoint fails if "
                 "they still cannot be written\n";
    warned_ = true;
}

void MetricsLog::commit() {
    if (!write_pending() || ::fsync(fd_) != 0) {
        const int error = pending_.empty() ? errno : error_;
        throw std::runtime_error(
            "cannot append to '" + path_ + "' (" + std::strerror(error) + "); " +
            (error == EFBIG ? "raise the file-size limit (ulimit -f)" : "free some disk space") +
            " and resume with --resume: the last checkpoint and its rows are intact");
    }
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
