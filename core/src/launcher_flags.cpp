#include "dtnn/launcher_flags.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
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
    {"communicator", "parallel.communicator.name", 's',
     "dtnn: auto, local, mpi, tcp, grpc or mqtt (processes started by hand; docs/federated.md)"},
    {"rank", "parallel.communicator.rank", 'i', "dtnn, tcp, grpc, mqtt: this process's rank"},
    {"world-size", "parallel.communicator.world_size", 'i',
     "dtnn, tcp, grpc, mqtt: the number of ranks"},
    {"server", "parallel.communicator.server", 's', "dtnn, tcp, grpc: rank 0's host:port"},
    {"broker", "parallel.communicator.broker", 's', "dtnn, mqtt: the MQTT broker's host:port"},
    {"codec", "parallel.codec", 's',
     "dtnn: what goes over the wire: none, fp16, bf16, topk, powersgd, secagg (secure "
     "aggregation) or ckks (homomorphic encryption); "
     "parameters with --set 'parallel.codec={...}'"},
    {"tls-ca", "parallel.communicator.tls_ca", 's',
     "dtnn, tcp, grpc, mqtt: the run's certificate authority (PEM): only peers it signed are let "
     "in"},
    {"tls-cert", "parallel.communicator.tls_cert", 's',
     "dtnn, tcp, grpc, mqtt: this rank's certificate (PEM)"},
    {"tls-key", "parallel.communicator.tls_key", 's',
     "dtnn, tcp, grpc, mqtt: this rank's private key (PEM)"},
    {"resume", "training.resume", 's',
     "continue from the newest checkpoint in this folder (or this file)"},
    {"weights-and-bias-filename", "training.weights_and_bias_filename", 's',
     "start from the weights of this checkpoint file, or of this PyDTNN .npz file"},
    {"store-weights-and-bias-filename", "output.weights_npz", 's',
     "after training, write the weights here as PyDTNN's .npz"},
    {"checkpoint-dir", "output.checkpoint_dir", 's', "write a checkpoint here after every epoch"},
    {"tensorboard", "output.tensorboard", 's', "write TensorBoard event files in this folder"},
    {"learning-rate-scaling", "optimizer.learning_rate_scaling", 'b',
     "multiply the learning rate by the number of ranks (PyDTNN; without the flag, a run made "
     "of flags does so when --global-batch-size is not given, as 3.x)"},
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
    {"enable-fused-conv-relu", "fusion.conv_relu", 'b', "fuse conv2d and relu (PyDTNN 1.x)"},
    {"enable-fused-conv-bn", "fusion.conv_batchnorm", 'b',
     "fuse conv2d and batchnorm (PyDTNN 1.x)"},
    {"enable-fused-conv-bn-relu", "fusion.conv_batchnorm_relu", 'b',
     "fuse conv2d, batchnorm and relu (PyDTNN 1.x)"},
    {"enable-fused-bn-relu", "fusion.batchnorm_relu", 'b', "fuse batchnorm and relu (PyDTNN 1.x)"},
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
     "central crop of every image: the fraction kept (PyDTNN's newer name of transform-crop-perc)",
     nullptr, nullptr, "augment-crop"},
    {"augment-scale-size", "dataset.transform_resize", 'i',
     "resize every image to this side (PyDTNN's newer name of transform-resize-size)", nullptr,
     nullptr, "augment-scale"},
    {"augment-normalize-offset", "dataset.normalize_offset", 'f', "x * scale + offset", nullptr,
     nullptr, "augment-normalize"},
    {"augment-normalize-scale", "dataset.normalize_scale", 'f', "x * scale + offset", nullptr,
     nullptr, "augment-normalize"},
    {"optimizer-momentum", "optimizer.momentum", 'f', "momentum (sgd)"},
    {"optimizer-nesterov", "optimizer.nesterov", 'b', "Nesterov momentum (sgd)"},
    {"optimizer-decay", "optimizer.decay", 'f', "weight decay"},
    {"optimizer-beta1", "optimizer.beta1", 'f', "beta1 (adam, nadam)"},
    {"optimizer-beta2", "optimizer.beta2", 'f', "beta2 (adam, nadam)"},
    {"optimizer-epsilon", "optimizer.epsilon", 'f', "epsilon (rmsprop, adam, nadam)"},
    {"enable-gpu", "device", 'g', "train on the GPU (one per process): sets device to cuda", "cuda",
     "cpu"},
    {"enable-cudnn-auto-conv-alg", "gpu.cudnn_auto_conv_alg", 'b',
     "let cuDNN's search pick each convolution's algorithms"},
    {"enable-gpudirect", "gpu.gpudirect", 'b', "pass GPU memory to a CUDA-aware MPI"},
    {"enable-nccl", "gpu.nccl", 'b', "exchange GPU gradients with NCCL"},
    {"tf32", "gpu.tf32", 'b', "allow TF32 tensor-core math for float32 on the GPU"},

    // --- PyDTNN 1.x's names (spelled with _ there) and 3.x's that no entry above has ---
    {"shared-storage", "", '-',
     "every rank reads the dataset's path itself, so a copy of it at that path on each node "
     "(1.x's false) works as one shared file system does"},
    {"shared-data", "parallel.shared_data", 'b',
     "false: each rank reads its own dataset ({rank} in its path becomes the rank)"},
    {"enable-best-of", "conv.algorithm", 'g', "true: conv.algorithm best_of", "best_of"},
    {"enable-conv-gemm", "conv.algorithm", 'g', "true: conv.algorithm gemm", "gemm"},
    {"enable-conv-winograd", "conv.algorithm", 'g', "true: conv.algorithm winograd", "winograd"},
    {"enable-memory-cache", "", '-',
     "dtnn allocates every buffer once, when the model is built, and its conv layers share one "
     "workspace (conv.workspace)"},
    {"use-synthetic-data", "dataset.name", 'g', "true: the synthetic dataset", "synthetic"},
    {"dataset-train-path", "dataset.path", 's',
     "dataset folder (dtnn reads both splits from one folder)"},
    {"dataset-test-path", "dataset.path", 's',
     "dataset folder: must be the training one's (dtnn reads both splits from one folder)"},
    {"flip-images", "", '-', "turns on --flip-images-prob (PyDTNN 1.x)"},
    {"flip-images-prob", "dataset.augment_horizontal_flip", 'f',
     "probability of mirroring a training image", nullptr, nullptr, "flip-images"},
    {"crop-images", "", 'r',
     "PyDTNN 1.x's random crop to a crop-images-size patch has no dtnn form; "
     "--augment-random-crop shifts within a padded image"},
    {"crop-images-size", "", 'r', "see --crop-images"},
    {"crop-images-prob", "", 'r', "see --crop-images"},
    {"momentum", "optimizer.momentum", 'f', "momentum (sgd; PyDTNN 1.x's name)"},
    {"decay", "optimizer.decay", 'f', "weight decay (PyDTNN 1.x's name)"},
    {"nesterov", "optimizer.nesterov", 'b', "Nesterov momentum (sgd; PyDTNN 1.x's name)"},
    {"beta1", "optimizer.beta1", 'f', "beta1 (adam, nadam; PyDTNN 1.x's name)"},
    {"beta2", "optimizer.beta2", 'f', "beta2 (adam, nadam; PyDTNN 1.x's name)"},
    {"epsilon", "optimizer.epsilon", 'f', "epsilon (rmsprop, adam, nadam; PyDTNN 1.x's name)"},
    {"rho", "optimizer.rho", 'f', "rho (rmsprop; PyDTNN 1.x's name)"},
    {"optimizer-rho", "optimizer.rho", 'f', "rho (rmsprop)"},
    {"optimizer-tau", "parallel.codec.tau", 'i',
     "oktopk: sums between re-balancing the regions each rank sums"},
    {"optimizer-tau-prime", "parallel.codec.tau_prime", 'i',
     "oktopk: sums between re-estimating the thresholds (kept in between)"},
    {"optimizer-density", "parallel.codec.density", 'f',
     "oktopk, topk: the fraction of each bucket's values sent (--optimizer oktopk: Ok-Topk's "
     "sparse allreduce, the oktopk codec with sgd)"},
    {"oktopk-min-k", "parallel.codec.min_k", 'i', "oktopk: the fewest values a bucket sends"},
    {"loss-func", "loss.name", 's',
     "loss plugin (categorical_cross_entropy, nll or negative_log_likelihood, ...)"},
    {"loss-eps", "loss.eps", 'f',
     "the smallest probability a loss takes the log of (categorical_cross_entropy, "
     "binary_cross_entropy; dtnn's default 0: 1e-7 in float32, 1e-15 in float64)"},
    {"use-loss-weights", "", '-',
     "turns on --loss-weights; alone, the weights come from the training split's class "
     "frequencies (PyDTNN 3.x's dataset weights)"},
    {"loss-weights", "loss.weights", 'v',
     "class weights of the loss, comma-separated, one per class", "frequency", nullptr,
     "use-loss-weights"},
    {"metrics", "metrics", 'l', "metric plugins, comma-separated"},
    {"schedulers", "schedulers", 'l',
     "scheduler plugins, comma-separated; the scheduler flags below set their parameters"},
    {"lr-schedulers", "schedulers", 'l', "scheduler plugins (PyDTNN 1.x's name of --schedulers)"},
    {"warm-up-epochs", "schedulers/warm_up.warmup_epochs", 'i', "warm_up: epochs of the ramp"},
    {"early-stopping-metric", "schedulers/early_stopping.metric", 's',
     "early_stopping: the metric watched"},
    {"early-stopping-patience", "schedulers/early_stopping.patience", 'i',
     "early_stopping: epochs without improvement before stopping"},
    {"early-stopping-minimize", "schedulers/early_stopping.mode", 'g',
     "early_stopping: true minimises the metric, false maximises it", "min", "max"},
    {"reduce-lr-on-plateau-metric", "schedulers/reduce_lr_on_plateau.metric", 's',
     "reduce_lr_on_plateau: the metric watched"},
    {"reduce-lr-on-plateau-factor", "schedulers/reduce_lr_on_plateau.factor", 'f',
     "reduce_lr_on_plateau: new rate = rate x factor"},
    {"reduce-lr-on-plateau-patience", "schedulers/reduce_lr_on_plateau.patience", 'i',
     "reduce_lr_on_plateau: epochs without improvement before reducing"},
    {"reduce-lr-on-plateau-min-lr", "schedulers/reduce_lr_on_plateau.min_lr", 'f',
     "reduce_lr_on_plateau: the lowest rate"},
    {"reduce-lr-every-nepochs-factor", "schedulers/reduce_lr_every_nepochs.factor", 'f',
     "reduce_lr_every_nepochs: new rate = rate x factor"},
    {"reduce-lr-every-nepochs-nepochs", "schedulers/reduce_lr_every_nepochs.nepochs", 'i',
     "reduce_lr_every_nepochs: epochs between reductions"},
    {"reduce-lr-every-nepochs-min-lr", "schedulers/reduce_lr_every_nepochs.min_lr", 'f',
     "reduce_lr_every_nepochs: the lowest rate"},
    {"stop-at-loss-metric", "schedulers/stop_at_loss.metric", 's',
     "stop_at_loss: the metric watched"},
    {"stop-at-loss-threshold", "schedulers/stop_at_loss.threshold", 'f',
     "stop_at_loss: stop when the metric passes this"},
    {"model-checkpoint-metric", "schedulers/model_checkpoint.metric", 's',
     "model_checkpoint: the metric watched"},
    {"model-checkpoint-save-freq", "schedulers/model_checkpoint.save_freq", 'i',
     "model_checkpoint: epochs between saves"},
    {"mpi-processes", "", 'r', "the number of ranks is the launcher's (mpirun -np)"},
    {"threads-per-process", "training.threads", 'i', "threads per rank (as --threads)"},
    {"gpus-per-node", "", '~', "each rank takes the GPU of its local rank number"},
    {"mpi-protocol", "", 'r', "dtnn's ranks are started and connected by MPI (mpirun)"},
    {"mpi-server", "", 'r', "dtnn's ranks are started and connected by MPI (mpirun)"},
    {"mpi-port", "", 'r', "dtnn's ranks are started and connected by MPI (mpirun)"},
    {"non-blocking-mpi", "parallel.blocking", 'n',
     "true: overlap the gradient allreduce with backward (PyDTNN 1.x; --use-blocking-mpi's "
     "opposite)"},
    {"parallel-data", "parallel.mode", 'g', "true: data parallelism; false: one process", "data",
     "sequential"},
    {"parallel-pipeline", "parallel.pipeline", 'b',
     "3.x: each step's gradient sums overlap the next step and are applied at its end (one step "
     "stale)"},
    {"use-mpi-buffers", "", 'r',
     "dtnn always exchanges flat buffers; there is no per-object (pickled) MPI to choose"},
    {"use-cudnn", "", '-', "cuDNN is used whenever the run is on the GPU (--enable-gpu)"},
    {"enable-cudnn", "", '-', "cuDNN is used whenever the run is on the GPU (--enable-gpu)"},
    {"use-gpudirect", "gpu.gpudirect", 'b', "pass GPU memory to a CUDA-aware MPI"},
    {"use-nccl", "gpu.nccl", 'b', "exchange GPU gradients with NCCL"},
    {"use-cudnn-auto-conv-algo", "gpu.cudnn_auto_conv_alg", 'b',
     "let cuDNN's search pick each convolution's algorithms"},
    {"encryption", "parallel.codec.name", 's',
     "3.x: tenseal: what ranks exchange goes homomorphically encrypted, CKKS through Python's "
     "TenSEAL (the ckks codec, docs/federated.md; openfhe is not in dtnn)"},
    {"encryption-slots", "parallel.codec.slots", 'i',
     "3.x, ckks: 2^N values per ciphertext (ring degree 2^(N+1))"},
    {"encryption-scale", "parallel.codec.scale", 'i', "3.x, ckks: values go as value x 2^N"},
    {"encryption-security", "parallel.codec.security", 'i', "3.x, ckks: 128, 192 or 256 bits"},
    {"encryption-key", "parallel.codec.key_file", 's',
     "dtnn, ckks: the run's CKKS key, the same file on every rank (scripts/make-ckks-key.py); "
     "without it rank 0 makes one and sends it to each rank sealed"},
    {"tracer-pmlib-server", "", 'r',
     "PMlib power tracing is not in dtnn: energy comes from RAPL, perf or NVML counters "
     "(output.energy, on by default where one works; joules in the history, --profile and the "
     "trace)"},
    {"tracer-pmlib-port", "", 'r', "see --tracer-pmlib-server"},
    {"tracer-pmlib-device", "", 'r', "see --tracer-pmlib-server"},
    {"profile", "output.profile", 'b',
     "after training, print the per-layer profile and where a step's time went"},
    {"cpu-speed", "", 'r',
     "PyDTNN's performance-model input; dtnn predict measures a step or reads a profile"},
    {"memory-bw", "", 'r',
     "PyDTNN's performance-model input; dtnn predict measures a step or reads a profile"},
    {"network-bw", "", 'r',
     "PyDTNN's performance-model input; dtnn predict --network bandwidth_gbps=B"},
    {"network-lat", "", 'r',
     "PyDTNN's performance-model input; dtnn predict --network latency_us=L"},
    {"network-alg", "", 'r',
     "PyDTNN's performance-model input; dtnn predict models ring and tree allreduces"},
    {"network-algo", "", 'r',
     "PyDTNN's performance-model input; dtnn predict models ring and tree allreduces"},
    {"backend", "", 'r',
     "PyDTNN's Python backends; dtnn's plugins are picked by conv.algorithm and device"},
    {"conv-direct-method", "", 'r',
     "ConvDirect's method names; dtnn's direct plugin picks its kernels for the CPU "
     "(conv.algorithm direct)"},
    {"quantize", "", '-', "turns on --quantize-dtype"},
    {"quantize-dtype", "training.precision", 's',
     "float16 or bfloat16: convolutions, fc and attention multiply in that format, with float32 "
     "sums and master weights (fp16 with loss scaling; docs/precision.md)",
     "float16", nullptr, "quantize"},
    {"model-sync-quantize", "", '-', "turns on --model-sync-dtype"},
    {"model-sync-dtype", "parallel.codec.name", 's',
     "float16: what ranks exchange (gradients, weights) goes as fp16 (the fp16 codec); float32, "
     "float64: as it is (dtnn: also bfloat16, or --set parallel.codec=...)",
     nullptr, nullptr, "model-sync-quantize"},
    {"model-sync-algo", "parallel.model_sync_alg", 's',
     "avg, wavg or invavg (3.x's name of invwavg)"},
    {"shared-tmp-memory", "conv.workspace", 'g',
     "true: one scratch buffer for every conv layer (dtnn's default)", "shared", "per_layer"},
    {"dataset-lang", "dataset.lang", 's',
     "seq2seq (iwslt): the source language, train.<lang> in the folder --dataset-path; text "
     "(mask_lang): recorded (its tokens do not depend on it)"},
    {"dataset-lang2", "dataset.lang2", 's',
     "seq2seq (iwslt): the target language, train.<lang2> in the folder --dataset-path"},
    {"synthetic-train-samples", "dataset.train_samples", 'i', "synthetic training samples"},
    {"synthetic-test-samples", "dataset.test_samples", 'i', "synthetic test samples"},
    {"synthetic-input-shape", "dataset.input_shape", 'c',
     "synthetic sample shape, C,H,W as PyDTNN writes it"},
    {"synthetic-output-shape", "dataset.classes", 'i', "synthetic classes"},
    {"augment-shuffle", "training.shuffle", 'b', "shuffle the training samples every epoch"},
    {"augment-crop", "", '-', "turns on --augment-crop-perc"},
    {"augment-scale", "", '-', "turns on --augment-scale-size"},
    {"augment-normalize", "", '-',
     "turns on --augment-normalize-offset and --augment-normalize-scale"},
};

}  // namespace

std::span<const Flag> flags() { return kFlags; }

const Flag* find_flag(std::string_view name) {
  std::string dashed(name);
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  for (const Flag& f : kFlags)
    if (dashed == f.flag) return &f;
  return nullptr;
}

bool is_boolean(const Flag& f) {
  return f.kind == 'b' || f.kind == 'n' || f.kind == 'g' || f.kind == '-';
}

namespace {
// Whether some flag needs this one on.
bool is_gate(const Flag& g) {
  return std::any_of(std::begin(kFlags), std::end(kFlags),
                     [&](const Flag& f) { return f.gate && std::string_view(f.gate) == g.flag; });
}
}  // namespace

namespace {

std::optional<bool> truth(std::string value) {
  for (auto& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (value == "true" || value == "1" || value == "yes") return true;
  if (value == "false" || value == "0" || value == "no") return false;
  return std::nullopt;
}

// "a,b,,c" -> {"a", "b", "c"}
std::vector<std::string> split_commas(const std::string& raw) {
  std::vector<std::string> out;
  std::string item;
  for (char c : raw + ",") {
    if (c != ',') {
      item += c;
      continue;
    }
    if (!item.empty()) out.push_back(item);
    item.clear();
  }
  return out;
}

}  // namespace

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
    case '~':
      return std::string();
    case 'b':
    case 'n':
    case 'g':
    case '-': {
      const auto on = truth(raw);
      if (!on) return bad("true or false");
      if (f.kind == 'b') return key + (*on ? "=true" : "=false");
      if (f.kind == 'n') return key + (*on ? "=false" : "=true");
      if (f.kind == '-') return std::string();
      const char* value = *on ? f.on : f.off;
      return value ? key + "=" + json(value).dump() : std::string();
    }
    case 'l': {
      const std::vector<std::string> names = split_commas(raw);
      if (names.empty()) return bad("comma-separated names");
      return key + "=" + json(names).dump();
    }
    case 'v':
    case 'c': {
      json values = json::array();
      for (const std::string& item : split_commas(raw)) {
        const json v = json::parse(item, nullptr, false);
        if (v.is_discarded() || !v.is_number() || (f.kind == 'c' && !v.is_number_integer()))
          return bad(f.kind == 'c' ? "comma-separated integers C,H,W" : "comma-separated numbers");
        values.push_back(v);
      }
      if (values.empty() || (f.kind == 'c' && values.size() != 3 && values.size() != 1))
        return bad(f.kind == 'c' ? "C,H,W" : "comma-separated numbers");
      if (f.kind == 'c' && values.size() == 3) values = {values[1], values[2], values[0]};
      return key + "=" + values.dump();
    }
    case 'r':
      why = "--" + std::string(f.flag) + " is not supported: " + f.help;
      return std::nullopt;
    default: {
      const json v = json::parse(raw, nullptr, false);
      if (v.is_discarded() || !v.is_number() || (f.kind == 'i' && !v.is_number_integer()))
        return bad(f.kind == 'i' ? "an integer" : "a number");
      return key + "=" + v.dump();
    }
  }
}

namespace {
// The names of PyDTNN 3.x's Ok-Topk optimizers.
bool is_oktopk_optimizer(const std::string& name) {
  return name == "oktopk" || name == "sgd_oktopk" || name == "oktopksp";
}
}  // namespace

FlagSettings flag_settings(const std::vector<std::pair<std::string, std::string>>& given) {
  FlagSettings out;
  auto fail = [&](const std::string& why) {
    if (out.error.empty()) out.error = why;
  };
  // Gates' values, each flag's assignment, and which flag set which key first (two flags that
  // set one key, differently, are an error).
  std::map<std::string, bool> gates;
  for (const auto& [name, value] : given)
    if (const Flag* f = find_flag(name); f && f->kind == '-')
      if (const auto on = truth(value)) gates[f->flag] = *on;
  std::map<std::string, std::pair<std::string, std::string>> by_key;  // key -> (flag, value)
  std::vector<std::string> scheduler_names;
  json scheduler_params = json::object();
  std::map<std::string, std::string> scheduler_flag;  // scheduler -> a flag that set a parameter
  for (const auto& [name, value] : given) {
    const Flag* f = find_flag(name);
    if (!f) {
      fail("--" + name + ": not a launcher flag (dtnn run --help lists them)");
      continue;
    }
    std::string why;
    auto set = flag_assignment(*f, value, why);
    if (!set) {
      fail(why);
      continue;
    }
    const std::string flag = std::string("--") + f->flag;
    if (std::string_view(f->flag) == "encryption" && value == "openfhe") {
      fail(flag +
           " openfhe: OpenFHE is not in dtnn: Debian packages no OpenFHE, and PyPI's "
           "openfhe wheels carry a Python extension for CPython 3.10 or 3.12 only (Debian 12's is "
           "3.11) and no C++ headers; --encryption tenseal encrypts with the same scheme (CKKS) "
           "through TenSEAL (docs/federated.md)");
      continue;
    }
    if (std::string_view(f->flag) == "optimizer" && is_oktopk_optimizer(value)) {
      // PyDTNN 3.x's Ok-Topk optimizers: SGD over Ok-Topk's sparse allreduce, in dtnn the sgd
      // optimizer and the oktopk codec.
      out.notes.push_back(flag + " " + value +
                          ": dtnn's sgd with the oktopk codec (parallel.codec, docs/federated.md)");
      out.sets.push_back("parallel.codec.name=\"oktopk\"");
      set = "optimizer.name=\"sgd\"";
    }
    if (f->kind == '-' || f->kind == '~') {
      if (!is_gate(*f)) out.notes.push_back(flag + " has no effect: " + f->help);
      continue;
    }
    if (set->empty()) continue;  // a 'g' flag whose value picks nothing
    if (f->gate && !gates[f->gate]) {
      out.notes.push_back(flag + " has no effect without --" + f->gate + " (as in PyDTNN)");
      continue;
    }
    const std::string key = set->substr(0, set->find('='));
    const std::string assigned = set->substr(set->find('=') + 1);
    if (key == "schedulers") {
      scheduler_names = json::parse(assigned).get<std::vector<std::string>>();
      continue;
    }
    if (key.starts_with("schedulers/")) {
      const std::string scheduler = key.substr(11, key.find('.') - 11);
      scheduler_params[scheduler][key.substr(key.find('.') + 1)] = json::parse(assigned);
      scheduler_flag.emplace(scheduler, flag);
      continue;
    }
    const auto [first, fresh] = by_key.emplace(key, std::make_pair(flag, assigned));
    if (!fresh && first->second.second != assigned) {
      fail(flag + " and " + first->second.first + " both set " + key + ", differently (" +
           assigned + " and " + first->second.second + ")");
      continue;
    }
    out.sets.push_back(*set);
  }
  for (const auto& [gate, on] : gates) {
    // The flags this gate turns on, and whether one of them was given.
    std::string gated;
    bool given_one = false;
    for (const Flag& f : kFlags) {
      if (!f.gate || gate != f.gate) continue;
      gated += (gated.empty() ? "--" : ", --") + std::string(f.flag);
      for (const auto& g : given) given_one = given_one || find_flag(g.first) == &f;
    }
    // A gate given on alone: a flag it turns on that has an `on` value takes it (PyDTNN's
    // --use-loss-weights: the dataset's weights); else the value it turns on is missing.
    const Flag* alone = nullptr;
    for (const Flag& f : kFlags)
      if (f.gate && gate == f.gate && f.on) alone = &f;
    if (on && !given_one && alone) {
      out.sets.push_back(std::string(alone->key) + "=" + json(alone->on).dump());
      continue;
    }
    if (on && !given_one) fail("--" + gate + ": give the value it turns on (" + gated + ")");
  }
  for (const auto& [scheduler, flag] : scheduler_flag)
    if (std::find(scheduler_names.begin(), scheduler_names.end(), scheduler) ==
        scheduler_names.end())
      fail(flag + " sets a parameter of the " + scheduler + " scheduler, which --schedulers " +
           (scheduler_names.empty() ? "does not name (give --schedulers " + scheduler + ")"
                                    : "does not name"));
  if (!scheduler_names.empty()) {
    json list = json::array();
    for (const std::string& name : scheduler_names) {
      json s = scheduler_params.value(name, json::object());
      s["name"] = name;
      list.push_back(s);
    }
    out.sets.push_back("schedulers=" + list.dump());
  }
  return out;
}

namespace {
// After a bare boolean or refused flag, a word that cannot be the experiment file (a number, or no
// '.' or '/'; no such file) was meant as the flag's value ("--evaluate maybe", "--optimizer-tau
// 0.5"): taken as one, it is refused naming the flag, instead of being left as a stray positional
// argument.
bool meant_as_value(const std::string& next) {
  std::error_code ec;
  char* end = nullptr;
  const bool number = !next.empty() && (std::strtod(next.c_str(), &end), *end == '\0');
  return !next.empty() && next[0] != '-' &&
         (number || next.find_first_of("./") == std::string::npos) &&
         !std::filesystem::exists(next, ec);
}
}  // namespace

std::vector<std::string> explicit_booleans(std::vector<std::string> args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!a.starts_with("--") || a.find('=') != std::string::npos) {
      out.push_back(a);
      continue;
    }
    const std::string name = a.substr(2);
    // A refused flag may be given bare too: its value does not matter.
    if (const Flag* f = find_flag(name); f && (is_boolean(*f) || f->kind == 'r')) {
      if (i + 1 < args.size() && (truth(args[i + 1]) || meant_as_value(args[i + 1]))) {
        out.push_back(a + "=" + args[++i]);  // 1.x: --evaluate True (or a bad value, refused)
      } else {
        out.push_back(a + "=true");
      }
      continue;
    }
    if (name.starts_with("no-") || name.starts_with("no_")) {
      if (const Flag* f = find_flag(name.substr(3)); f && is_boolean(*f)) {
        out.push_back("--" + std::string(f->flag) + "=false");
        continue;
      }
    }
    out.push_back(a);
  }
  return out;
}

namespace {
// 3.x's default, dtnn's, and the dtnn key whose assignment by a flag settles it.
struct DefaultDifference {
  const char* key;
  const char* pydtnn3;  // as the flag that gives it
  const char* dtnn;
};
constexpr DefaultDifference kPydtnn3Defaults[] = {
    {"dataset.validation_split", "--validation-split 0.2", "0: no validation split"},
    {"schedulers", "--schedulers early_stopping,reduce_lr_on_plateau,model_checkpoint", "none"},
    {"loss", "--loss-func negative_likelihood (over 3.x's log-softmax outputs)",
     "categorical_cross_entropy (the zoo's models end in a softmax)"},
    {"training.seed", "--random-seed 57005", "1"},
    {"parallel.model_sync_alg", "--model-sync-algo avg",
     "wavg: a rank weighs its share of the batch"},
};
}  // namespace

std::string pydtnn3_defaults_note(const std::vector<std::string>& sets) {
  std::string note;
  for (const DefaultDifference& d : kPydtnn3Defaults) {
    const std::string key = d.key;
    const bool set = std::any_of(sets.begin(), sets.end(), [&](const std::string& s) {
      return s.starts_with(key + "=") || s.starts_with(key + ".");
    });
    if (!set) note += std::string(note.empty() ? "" : "; ") + d.pydtnn3 + " (dtnn: " + d.dtnn + ")";
  }
  return note.empty()
             ? note
             : "PyDTNN 3.x's defaults that dtnn does not take (give the flag for 3.x's): " + note;
}

nlohmann::json flag_run_base(const std::string& model) {
  return json::object({{"model", model}, {"optimizer", {{"learning_rate_scaling", "auto"}}}});
}

std::string flags_markdown() {
  std::string out = "| flag | key | meaning |\n| --- | --- | --- |\n";
  for (const Flag& f : kFlags) {
    const bool keyless = f.kind == '-' || f.kind == '~';
    std::string key = f.kind == 'r' ? "refused" : keyless ? "none" : std::string("`") + f.key + "`";
    std::string meaning = f.help;
    if (f.kind == 'g')
      meaning += std::string(" (") + (f.on ? "true: `" + json(f.on).dump() + "`" : "") +
                 (f.on && f.off ? ", " : "") +
                 (f.off ? "false: `" + json(f.off).dump() + "`" : "") + ")";
    if (f.kind == 'n') meaning += " (sets the key to the opposite)";
    if (f.gate) meaning += std::string("; needs --") + f.gate;
    if (f.gate && f.on)
      meaning += " (--" + std::string(f.gate) + " alone: `" + json(f.on).dump() + "`)";
    out += std::string("| `--") + f.flag + "` | " + key + " | " + meaning + " |\n";
  }
  return out;
}

}  // namespace dtnn::config
