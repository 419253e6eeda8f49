// Room — train: metrics.csv, the one record of a run's progress, and the train-loss window.
//
// metrics.csv: a header, then one row per logged step (docs/training.md explains the columns)
//   step,tokens,train_loss,val_loss,val_accuracy,lr,grad_norm,tokens_per_s,elapsed_s
// val_loss and val_accuracy are empty on rows without an evaluation. train_loss is the mean
// over the steps since the previous row; tokens_per_s counts the same window.
//
// Every append is checked. A row the file system refuses (a full disk for a moment, a
// file-size limit) stays in memory, a warning names the error once, and the next append
// writes it first, continuing a partly written row where it stopped — so a disk that fills
// and frees again leaves no gap and no garbled row. commit() (before every checkpoint) must
// write everything pending and fsync it, or the run ends with an error: a checkpoint is never
// committed beside a metrics.csv that lacks its rows.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>

#include "train/evaluate.hpp"

namespace rf {

struct MetricsRow {
    size_t step = 0, tokens = 0;
    double train_loss = 0;
    std::optional<EvalResult> eval;  // only on evaluation steps
    double lr = 0, grad_norm = 0, tokens_per_s = 0, elapsed_s = 0;
};

class MetricsLog {
public:
    // A new run: writes the header. Resuming at `resume_step`: keeps the header and the rows up
    // to that step (an interrupted run may have logged more than it checkpointed).
    // Warnings (a refused append) go to `warn`.
    MetricsLog(const std::string& path, bool resume, size_t resume_step, std::ostream& warn);
    ~MetricsLog();
    MetricsLog(const MetricsLog&) = delete;
    MetricsLog& operator=(const MetricsLog&) = delete;
    // elapsed_s of the last kept row (0 for a new run): a resumed run's clock continues there.
    double elapsed_before() const { return elapsed_before_; }
    // Written at once if the file system takes it; else kept for the next append or commit.
    void append(const MetricsRow& row);
    // Everything appended is in the file and fsync'd; throws std::runtime_error naming the
    // file and the error otherwise.
    void commit();

private:
    bool write_pending();  // false: some bytes are still pending (error_ says why)
    std::string path_;
    std::ostream& warn_;
    int fd_ = -1;
    std::string pending_;  // bytes not yet in the file
    int error_ = 0;        // errno of the last refused write
    bool warned_ = false;
    double elapsed_before_ = 0;
};

// The steps since the last logged row: their mean train loss and their speed. A checkpoint
// stores the loss part, so a resumed run logs the same mean as an uninterrupted one.
class LossWindow {
public:
    void add(double loss) {
        loss_sum_ += loss;
        ++loss_count_;
        ++steps_;
    }
    double mean_loss() const { return loss_sum_ / double(loss_count_); }
    // Training tokens per second of wall time since the window opened at `start_s`.
    double tokens_per_s(double now_s, size_t tokens_per_step) const;
    void reset(double now_s);  // a row was logged: start the next window
    void open(double now_s) { start_s_ = now_s; }

    // Checkpoint metadata (train_loss_sum in exact %a form, train_loss_count) and back.
    std::map<std::string, std::string> to_metadata() const;
    void restore(const std::map<std::string, std::string>& metadata);

private:
    double loss_sum_ = 0, start_s_ = 0;
    size_t loss_count_ = 0, steps_ = 0;
};

}  // namespace rf
