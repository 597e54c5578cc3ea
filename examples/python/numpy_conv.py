"""A convolution algorithm in numpy, registered as dtnn's conv plugin "numpy_conv".

Each pass is a sum over the filter's taps of one matrix product per tap (the window of tap (ky, kx)
is a strided slice of the padded input, copied into rows of channels so that the product is one
BLAS call), in NHWC; NCHW tensors are transposed in and out. Slower
than dtnn's own algorithms, and checked against the same `reference` (dtnn.check_plugin).

    import dtnn, numpy_conv
    dtnn.register(numpy_conv.NumpyConv)
    exp = dtnn.Experiment("configs/fashion_mnist_simplecnn.json",
                          {"conv.algorithm": "numpy_conv"})
"""
import numpy as np


class NumpyConv:
    """2-D convolution as one numpy matrix product per filter tap"""

    kind = "conv"
    name = "numpy_conv"
    parameters = {}

    def prepare(self, g):
        self.g = g

    # Tap (ky, kx)'s window of the padded NHWC input xp: [N, Ho, Wo, C] (a view).
    def _window(self, xp, ky, kx):
        g = self.g
        (sh, sw), (dh, dw) = g.stride, g.dilation
        y0, x0 = ky * dh, kx * dw
        return xp[:, y0:y0 + sh * (g.ho - 1) + 1:sh, x0:x0 + sw * (g.wo - 1) + 1:sw, :]

    def _nhwc(self, t):
        return t if self.g.layout == "nhwc" else t.transpose(0, 2, 3, 1)

    def _filter(self, w):  # as [KH, KW, C, K]
        return w if self.g.layout == "nhwc" else w.transpose(2, 3, 1, 0)

    def _padded(self, x):
        ph, pw = self.g.padding
        return np.pad(self._nhwc(x), ((0, 0), (ph, ph), (pw, pw), (0, 0)))

    def _rows(self, window):  # [N, Ho, Wo, C] as [N Ho Wo, C]
        return np.ascontiguousarray(window).reshape(-1, window.shape[-1])

    def forward(self, x, w, y):
        g, xp, wf = self.g, self._padded(x), self._filter(w)
        out = np.zeros((x.shape[0] * g.ho * g.wo, g.k), x.dtype)
        for ky in range(g.kh):
            for kx in range(g.kw):
                out += self._rows(self._window(xp, ky, kx)) @ wf[ky, kx]
        out = out.reshape(x.shape[0], g.ho, g.wo, g.k)
        y[...] = out if g.layout == "nhwc" else out.transpose(0, 3, 1, 2)

    def backward_data(self, dy, w, dx):
        g, wf = self.g, self._filter(w)
        d = self._rows(self._nhwc(dy))
        (ph, pw) = g.padding
        n = dy.shape[0]
        dxp = np.zeros((n, g.h + 2 * ph, g.w + 2 * pw, g.c), dy.dtype)
        for ky in range(g.kh):
            for kx in range(g.kw):
                self._window(dxp, ky, kx)[...] += (d @ wf[ky, kx].T).reshape(n, g.ho, g.wo, g.c)
        out = dxp[:, ph:ph + g.h, pw:pw + g.w, :]
        dx[...] = out if g.layout == "nhwc" else out.transpose(0, 3, 1, 2)

    def backward_filter(self, x, dy, dw):
        g, xp, d = self.g, self._padded(x), self._rows(self._nhwc(dy))
        grad = np.zeros((g.kh, g.kw, g.c, g.k), x.dtype)
        for ky in range(g.kh):
            for kx in range(g.kw):
                grad[ky, kx] = self._rows(self._window(xp, ky, kx)).T @ d
        return grad if g.layout == "nhwc" else grad.transpose(3, 2, 0, 1)  # added to dw
