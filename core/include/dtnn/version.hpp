// dtnn version and the build fingerprint a plugin must share with the core it is loaded into.
#pragma once
#include "dtnn/version_config.hpp"

#define DTNN_STRINGIFY_(x) #x
#define DTNN_STRINGIFY(x) DTNN_STRINGIFY_(x)
// Compiler family and major version, and dtnn's major.minor: what makes C++ objects compatible.
#if defined(__clang__)
#define DTNN_COMPILER_ID "clang-" DTNN_STRINGIFY(__clang_major__)
#elif defined(__GNUC__)
#define DTNN_COMPILER_ID "gcc-" DTNN_STRINGIFY(__GNUC__)
#else
#define DTNN_COMPILER_ID "unknown"
#endif
#define DTNN_BUILD_FINGERPRINT DTNN_COMPILER_ID ";dtnn-" DTNN_VERSION_MAJOR_MINOR ";cxx20"
