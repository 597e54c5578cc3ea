#include "dtnn/launcher_flags.hpp"

#include <cctype>
#include <nlohmann/json.hpp>

namespace dtnn::config {

using nlohmann::json;

namespace {

const Flag kFlags[] = {
    {"model", "model", 's', "model file or name (configs/models/NAME.json)"},
    {"dataset", "dataset.name", 's', "dataset plugin (mnist, synthetic, ...)"},
    {"dataset-path", "dataset.path", 's', "dataset folder"},
    {"batch-size", "training.batch_size", 'i', "samples per batch (per rank)"},
    {"num-epochs", "training.epochs", 'i', "epochs to train"},
    {"steps-per-epoch", "training.steps_per_epoch", 'i', "batches per epoch (0: all)"},
    {"evaluate", "training.evaluate", 'b', "evaluate on the test set before and after training"},
    {"evaluate-only", "training.evaluate_only", 'b', "only evaluate"},
    {"optimizer", "optimizer.name", 's', "optimizer plugin (sgd, adam, ...)"},
    {"learning-rate", "optimizer.learning_rate", 'f', "learning rate"},
    {"validation-split", "dataset.validation_split", 'f', "fraction of the training set held out"},
    {"dtype", "training.dtype", 's', "float32 or float64"},
    {"tensor-format", "training.tensor_format", 's', "NHWC or NCHW"},
    {"conv-variant", "conv.algorithm", 's', "convolution algorithm plugin (i2c, reference, ...)"},
    {"seed", "training.seed", 'i', "random seed"},
    {"global-batch-size", "training.global_batch_size", 'i',
     "samples per step over all ranks (0: batch-size x ranks)"},
    {"parallel", "parallel.mode", 's', "auto, sequential or data"},
    {"use-blocking-mpi", "parallel.blocking", 'b', "blocking gradient allreduce"},
    {"model-sync-freq", "parallel.model_sync_freq", 'i',
     "0: average gradients every batch; N > 0: average weights every N batches; < 0: never"},
    {"model-sync-alg", "parallel.model_sync_alg", 's', "avg, wavg or invwavg"},
    {"model-sync-participation", "parallel.model_sync_participation", 's', "all or avail2all"},
    {"model-sync-min-avail", "parallel.model_sync_min_avail", 'i',
     "skip a synchronisation with fewer ranks holding samples"},
    {"initial-model-sync", "parallel.initial_model_sync", 'b', "start from rank 0's weights"},
    {"final-model-sync", "parallel.final_model_sync", 'b', "synchronise weights after training"},
    {"timeout", "parallel.timeout_s", 'f',
     "seconds a rank waits in one collective before the job ends with a report (0: forever)"},
    {"resume", "training.resume", 's',
     "continue from the newest checkpoint in this folder (or this file)"},
    {"weights-and-bias-filename", "training.weights_and_bias_filename", 's',
     "start from the weights of this checkpoint file, or of this PyDTNN .npz file"},
    {"store-weights-and-bias-filename", "output.weights_npz", 's',
     "after training, write the weights here as PyDTNN's .npz"},
    {"checkpoint-dir", "output.checkpoint_dir", 's', "write a checkpoint here after every epoch"},
    {"learning-rate-scaling", "optimizer.learning_rate_scaling", 'b',
     "divide the learning rate by the number of ranks (PyDTNN)"},
    {"threads", "training.threads", 'i', "threads (0: OMP_NUM_THREADS or all cores)"},
    {"random-seed", "training.seed", 'i', "random seed (PyDTNN's newer name)"},
    {"model-state-filename", "training.weights_and_bias_filename", 's',
     "start from these weights (PyDTNN's newer name for --weights-and-bias-filename)"},
    {"history-file", "output.history", 's',
     "write the training history here: PyDTNN's text columns, or JSON for a .json name"},
    {"history-format", "output.history_format", 's', "auto (by the file name), json or pydtnn"},
    {"tracing", "output.tracing", 'b', "record a trace (to --tracer-output, else trace.json)"},
    {"tracer-output", "output.trace", 's',
     "write the trace here: .json (Chrome/Perfetto), .csv (PyDTNN's simple tracer), .prv "
     "(Paraver)"},
    {"transform-crop-perc", "dataset.transform_central_crop", 'f',
     "central crop: the fraction of image height and width kept (1: off)"},
    {"transform-resize-size", "dataset.transform_resize", 'i',
     "resize images to this side, after the crop (0: off)"},
    {"prefetch", "dataset.prefetch", 'b', "make the next training batch while the current trains"},
    {"fused-conv-relu", "fusion.conv_relu", 'b', "fuse conv2d and relu"},
    {"fused-conv-bn", "fusion.conv_batchnorm", 'b', "fuse conv2d and batchnorm"},
    {"fused-conv-bn-relu", "fusion.conv_batchnorm_relu", 'b', "fuse conv2d, batchnorm and relu"},
    {"fused-bn-relu", "fusion.batchnorm_relu", 'b', "fuse batchnorm and relu"},
    {"test-as-validation", "dataset.test_as_validation", 'b', "validate on the test set"},
    {"dataset-percentage", "dataset.percentage", 'f',
     "samples per epoch as a fraction of the training set (0: off)"},
    {"augment-horizontal-flip", "dataset.augment_horizontal_flip", 'f',
     "probability of mirroring a training image"},
    {"augment-random-crop", "dataset.augment_random_crop", 'f',
     "probability of shifting a training image by up to augment-crop-padding pixels"},
    {"augment-crop-padding", "dataset.augment_crop_padding", 'i', "see augment-random-crop"},
    {"augment-vertical-flip", "dataset.augment_vertical_flip", 'f',
     "probability of mirroring a training image top to bottom"},
    {"augment-rotate", "dataset.augment_rotate", 'f', "probability of rotating a training image"},
    {"augment-rotate-degree", "dataset.augment_rotate_degree", 'f',
     "rotations are uniform in [-this, this] degrees"},
    {"augment-brightness", "dataset.augment_brightness", 'f',
     "probability of scaling a training image by U(0, 1) x augment-brightness-factor"},
    {"augment-brightness-factor", "dataset.augment_brightness_factor", 'f',
     "see augment-brightness"},
    {"augment-contrast", "dataset.augment_contrast", 'f',
     "probability of scaling a training image's contrast by U(0, 1) x augment-contrast-factor"},
    {"augment-contrast-factor", "dataset.augment_contrast_factor", 'f', "see augment-contrast"},
    {"augment-saturation", "dataset.augment_saturation", 'f',
     "probability of scaling a training image's saturation by U(0, 1) x augment-saturation-factor"},
    {"augment-saturation-factor", "dataset.augment_saturation_factor", 'f',
     "see augment-saturation"},
    {"augment-blur", "dataset.augment_blur", 'f',
     "probability of a Gaussian blur of a training image"},
    {"augment-blur-size", "dataset.augment_blur_size", 'f',
     "the blur's standard deviation, pixels"},
    {"augment-mask", "dataset.augment_mask", 'f',
     "probability of zeroing an augment-mask-size square of a training image (cutout)"},
    {"augment-mask-size", "dataset.augment_mask_size", 'i', "see augment-mask"},
    {"augment-perspective", "dataset.augment_perspective", 'f',
     "probability of a random perspective distortion of a training image"},
    {"augment-perspective-factor", "dataset.augment_perspective_factor", 'f',
     "how far corners move inwards at most, as a fraction of the size, in [0, 0.5)"},
    {"augment-crop-perc", "dataset.transform_central_crop", 'f',
     "central crop of every image: the fraction kept (PyDTNN's newer name of transform-crop-perc)"},
    {"augment-scale-size", "dataset.transform_resize", 'i',
     "resize every image to this side (PyDTNN's newer name of transform-resize-size)"},
    {"augment-normalize-offset", "dataset.normalize_offset", 'f', "x * scale + offset"},
    {"augment-normalize-scale", "dataset.normalize_scale", 'f', "x * scale + offset"},
    {"optimizer-momentum", "optimizer.momentum", 'f', "momentum (sgd)"},
    {"optimizer-nesterov", "optimizer.nesterov", 'b', "Nesterov momentum (sgd)"},
    {"optimizer-decay", "optimizer.decay", 'f', "weight decay"},
    {"optimizer-beta1", "optimizer.beta1", 'f', "beta1 (adam, nadam)"},
    {"optimizer-beta2", "optimizer.beta2", 'f', "beta2 (adam, nadam)"},
    {"optimizer-epsilon", "optimizer.epsilon", 'f', "epsilon (rmsprop, adam, nadam)"},
    {"enable-gpu", "device", 'g', "train on the GPU (one per process): sets device to cuda"},
    {"enable-cudnn-auto-conv-alg", "gpu.cudnn_auto_conv_alg", 'b',
     "let cuDNN's search pick each convolution's algorithms"},
    {"enable-gpudirect", "gpu.gpudirect", 'b', "pass GPU memory to a CUDA-aware MPI"},
    {"enable-nccl", "gpu.nccl", 'b', "exchange GPU gradients with NCCL"},
    {"tf32", "gpu.tf32", 'b', "allow TF32 tensor-core math for float32 on the GPU"},
};

}  // namespace

std::span<const Flag> flags() { return kFlags; }

std::optional<std::string> flag_assignment(const Flag& f, const std::string& raw,
                                           std::string& why) {
  auto bad = [&](const char* expected) {
    why = "--" + std::string(f.flag) + ": expected " + expected + ", got '" + raw + "'";
    return std::nullopt;
  };
  const std::string key = f.key;
  switch (f.kind) {
    case 's':
      return key + "=" + json(raw).dump();
    case 'b':
    case 'g': {
      std::string l = raw;
      for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const bool on = l == "true" || l == "1" || l == "yes";
      if (!on && l != "false" && l != "0" && l != "no") return bad("true or false");
      if (f.kind == 'g') return key + "=" + (on ? "cuda" : "cpu");
      return key + (on ? "=true" : "=false");
    }
    default: {
      const json v = json::parse(raw, nullptr, false);
      if (v.is_discarded() || !v.is_number() || (f.kind == 'i' && !v.is_number_integer()))
        return bad(f.kind == 'i' ? "an integer" : "a number");
      return key + "=" + v.dump();
    }
  }
}

std::string flags_markdown() {
  std::string out = "| flag | key | meaning |\n| --- | --- | --- |\n";
  for (const Flag& f : kFlags)
    out += std::string("| `--") + f.flag + "` | `" + f.key + "` | " + f.help + " |\n";
  return out;
}

}  // namespace dtnn::config
