// direct's engines on 64-byte vectors (width.hpp), for the avx512 build on CPUs that run 512-bit
// multiply-adds at full rate; the other builds compile nothing here.
#if defined(__AVX512F__)
#define DTNN_DIRECT_WIDE
#include "direct_algorithm.hpp"

dtnn::Plugin* dtnn::direct::create_wide(const Params& p) { return new Direct(p); }
#endif
