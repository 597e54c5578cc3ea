"""What the tests that compare with torchvision share (test_pytorch_import, test_onnx)."""


def randomised(net, seed):
    """Batchnorm statistics and affine parameters that are not 0 and 1, so that loading them is
    tested too. Returns net."""
    import torch
    g = torch.Generator().manual_seed(seed)
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.rand(m.running_mean.shape, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(m.weight.shape, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_(torch.rand(m.bias.shape, generator=g) * 0.2 - 0.1)
    return net
