// TensorBoard's event files, written as a run goes (output.tensorboard, `--tensorboard DIR`): one
// file events.out.tfevents.<seconds>.<host> in DIR, a record per event, as TensorFlow's writer
// frames them (length, masked CRC-32C of the length, the serialized Event, its masked CRC-32C).
// Scalars, histograms (weights, gradients) and the model's graph, encoded here by hand (the few
// protobuf fields of tensorflow/core/util/event.proto, summary.proto and graph.proto that these
// need), so no protobuf library is linked. Rank 0 writes (dtnn/trainer.hpp).
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "dtnn/core_export.hpp"

namespace dtnn {

class Model;
class Tensor;

class DTNN_CORE_EXPORT TensorBoardWriter {
 public:
  // Creates dir (and its parents) and a new event file in it, which starts with the file version
  // event. Throws dtnn::Error naming the folder or file when either cannot be made.
  explicit TensorBoardWriter(const std::filesystem::path& dir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  void scalar(std::string_view tag, double value, std::int64_t step);
  // A histogram of the tensor's values (copied to the host when it lives on a device): `buckets`
  // equal bins from its smallest to its largest value, with the count, sum and sum of squares.
  void histogram(std::string_view tag, const Tensor& values, std::int64_t step, int buckets = 30);
  // The model as a chain of nodes, "1.conv2d" fed by "0.input" and feeding "2.relu" (the names
  // the parameters' start with: "1.conv2d.weights"), each with its type, output shape, attributes
  // and parameter count (top-level layers; a block is one node).
  void graph(const Model& model);
  // Pushes what is buffered to the file (after each epoch, so TensorBoard sees the run as it goes).
  void flush();

  const std::filesystem::path& file() const { return file_; }
  // Makes dir (and its parents) where it is not; an Error naming it where it cannot be: what the
  // constructor does first, and Experiment::check_outputs before the run's first step.
  static void make_folder(const std::filesystem::path& dir);

 private:
  void write_event(const std::string& event);  // a serialized Event, framed
  std::filesystem::path file_;
  std::ofstream out_;
};

// CRC-32C (Castagnoli) of [data, data + n), masked as TensorFlow's record framing masks it:
// rotate right by 15, add 0xa282ead8.
DTNN_CORE_EXPORT std::uint32_t crc32c(const void* data, std::size_t n);
DTNN_CORE_EXPORT std::uint32_t masked_crc32c(const void* data, std::size_t n);

}  // namespace dtnn
