// direct's engines hand a block's run-time size to kernels that take it at compile time.
#pragma once

namespace dtnn::direct {

// f.template operator()<I>() for the I in [1, N] equal to n; nothing for any other n (0 included).
template <int N, class F>
inline void with_count(int n, F&& f) {
  if constexpr (N >= 1) {
    if (n == N) return f.template operator()<N>();
    with_count<N - 1>(n, f);
  }
}

}  // namespace dtnn::direct
