// Checkpoints: weights, layer state (dropout's step, ...), optimizer state (moments, step count),
// the shuffle seed and the training position, in one binary file:
//
//   "DTNNCKPT" | u32 version | u64 n | n bytes of JSON metadata | tensor bytes | u64 FNV-1a of all
//   bytes before it
//
// A run whose codec keeps error-feedback residuals adds them, one float32 tensor per rank
// (section "exchange_residual", named "rank R"), after the model's and the optimizer's; one whose
// codec keeps a state per bucket (PowerSGD's factors, the same on every rank) adds it, one float32
// tensor per bucket (section "exchange_codec_state", named "bucket B").
//
// The metadata lists every tensor (section, name, dtype, shape, offset). Loading checks the magic,
// version, length and checksum, then that model, dtype and optimizer match, and names the file
// and what differs otherwise; nothing is loaded unless everything matches.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/folder_lock.hpp"

namespace dtnn {

class Model;
class Optimizer;

struct CheckpointPosition {
  std::int64_t epoch = 0;        // epochs completed
  std::int64_t step = 0;         // steps of the next epoch already done
  std::int64_t global_step = 0;  // steps since training began
};

struct SchedulerState {
  std::string name;  // the scheduler plugin
  std::vector<double> values;
};

struct CheckpointInfo {
  std::string optimizer;   // optimizer plugin name ("" when the file holds weights only)
  std::uint64_t seed = 0;  // shuffle seed of the run
  CheckpointPosition position;
  double learning_rate = 0;  // the optimizer's, as schedulers left it (0: not recorded)
  std::vector<SchedulerState> schedulers;  // in config order
  // A coded exchange's error-feedback residuals (parallel.codec), one per rank in rank order,
  // each laid out as the exchange's buckets; empty when the run kept none.
  std::vector<std::vector<float>> exchange_residuals;
  // A reduce codec's state (PowerSGD's factors), bucket by bucket, the same on every rank; empty
  // when the codec keeps none.
  std::vector<std::vector<float>> exchange_codec_states;
  // fp16's dynamic loss scale (dtnn/loss_scale.hpp) and the finite steps in a row it has counted;
  // 0 when the run scaled no loss.
  double loss_scale = 0;
  std::int64_t loss_scale_good_steps = 0;
};

// The file's bytes for this model and optimizer (optimizer may be null: weights and layer state).
DTNN_CORE_EXPORT std::string encode_checkpoint(Model& model, Optimizer* optimizer,
                                               const CheckpointInfo& info);

// Loads `file` into model (weights and layer state) and, when given, the state of the optimizer
// (plugin optimizer_name). Throws Error naming the file and the mismatch; on error nothing has
// been changed.
DTNN_CORE_EXPORT CheckpointInfo load_checkpoint(const std::filesystem::path& file, Model& model,
                                                Optimizer* optimizer = nullptr,
                                                const std::string& optimizer_name = "");
// The same from the file's bytes; `where` names it in errors.
DTNN_CORE_EXPORT CheckpointInfo decode_checkpoint(const std::string& bytes,
                                                  const std::string& where, Model& model,
                                                  Optimizer* optimizer = nullptr,
                                                  const std::string& optimizer_name = "");

// The folder a run writes its checkpoints to (dir/checkpoint-epoch-NNNN-step-NNNNNN.dtnn, each
// written atomically). The run owns the checkpoints it writes and, when it resumes from a
// checkpoint in this folder, those up to that one (the run it continues); it removes only its
// own beyond the newest `keep`. A folder holding checkpoints that are not its own is refused
// when the run starts (they would be resumed by `--resume DIR` or lost), unless `overwrite`
// says to remove them. Temporary files of writes that a crash interrupted are removed. The run
// holds the folder's lock (dtnn/folder_lock.hpp) while it lives: a second run started on the same
// folder is refused, naming the first.
class DTNN_CORE_EXPORT CheckpointFolder {
 public:
  CheckpointFolder(std::filesystem::path dir, int keep, const std::filesystem::path& resumed_from,
                   bool overwrite);
  // Writes the checkpoint of this position; returns the file written.
  std::filesystem::path save(Model& model, Optimizer& optimizer, const CheckpointInfo& info);
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  FolderLock lock_;
  int keep_;
  std::vector<std::filesystem::path> own_;  // oldest first
};

// The newest checkpoint in dir (by position); Error when there is none.
DTNN_CORE_EXPORT std::filesystem::path latest_checkpoint(const std::filesystem::path& dir);

}  // namespace dtnn
