"""Weights from PyTorch (dtnn.pytorch): torchvision's networks (ResNet-18 and -50, DenseNet-169,
MobileNetV2, VGG-16), randomly initialised (no download), loaded into the zoo's models of the same
architecture give the same outputs on the same images, in both layouts; a network of another shape is refused, naming the layers, and loads nothing.
Skipped without torch and torchvision (Debian: python3-torch python3-torchvision;
scripts/install-deps.sh --torch).
"""
import numpy as np
import pytest

import dtnn

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
import dtnn.pytorch  # noqa: E402
from torch_nets import randomised  # noqa: E402


def experiment(model, size, classes, layout="NHWC"):
    return dtnn.Experiment({"model": model,
                            "dataset": {"name": "synthetic", "input_shape": [size, size, 3],
                                        "classes": classes, "train_samples": 2,
                                        "test_samples": 2},
                            "training": {"batch_size": 2, "tensor_format": layout},
                            "output": {"progress": "none"}})


def torch_probabilities(net, images_nchw):
    """PyTorch's softmax over the network's logits, in evaluation mode (running statistics)."""
    net.eval()
    with torch.no_grad():
        return torch.softmax(net(torch.from_numpy(images_nchw)), dim=1).numpy()


@pytest.mark.parametrize("dtnn_model, torchvision_model, size, layout", [
    ("resnet50_from_pytorch", "resnet50", 64, "NHWC"),
    ("densenet169_from_pytorch", "densenet169", 64, "NCHW"),
    ("mobilenetv2", "mobilenet_v2", 64, "NHWC"),
    ("resnet18_imagenet", "resnet18", 224, "NCHW"),
    ("vgg16_imagenet", "vgg16", 224, "NHWC"),
])
def test_torchvision_weights_give_torchvision_outputs(dtnn_model, torchvision_model, size,
                                                      layout):
    torch.manual_seed(1)
    classes = 1000 if dtnn_model.endswith("_imagenet") else 10
    net = randomised(getattr(torchvision.models, torchvision_model)(num_classes=classes), 2)
    exp = experiment(dtnn_model, size, classes, layout)
    dtnn.pytorch.load_into(exp, net)
    images = np.random.default_rng(3).standard_normal((2, 3, size, size)).astype(np.float32)
    expected = torch_probabilities(net, images)
    got = exp.predict(images if layout == "NCHW" else images.transpose(0, 2, 3, 1).copy())
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() < 1e-5
    # And the logits, up to the softmax's shift: log-probabilities agree to 1e-4.
    assert np.abs(np.log(got) - np.log(expected)).max() < 1e-4


def test_a_network_of_another_shape_is_refused_and_nothing_loads():
    exp = experiment("resnet50_from_pytorch", 32, 10)
    before = {k: v.copy() for k, v in exp.parameters().items()}
    with pytest.raises(ValueError, match="PyTorch's 'layer1.0.conv1' .*dtnn's layer|layers with"):
        dtnn.pytorch.load_into(exp, torchvision.models.resnet18(num_classes=10))
    wrong_classes = torchvision.models.resnet50(num_classes=7)
    with pytest.raises(ValueError, match=r"PyTorch's 'fc' \(linear\) and dtnn's layer .* \(FC\): "
                                         r"weights \(2048, 7\) against \(2048, 10\)"):
        dtnn.pytorch.load_into(exp, wrong_classes)
    for k, v in exp.parameters().items():
        assert np.array_equal(v, before[k]), k


def test_a_state_dict_and_a_saved_file_load_as_the_module(tmp_path):
    net = randomised(torchvision.models.mobilenet_v2(num_classes=10), 4)
    file = tmp_path / "mobilenet_v2.pt"
    torch.save(net.state_dict(), file)
    images = np.random.default_rng(5).standard_normal((2, 3, 32, 32)).astype(np.float32)
    outputs = []
    for source in (net, net.state_dict(), file):
        exp = experiment("mobilenetv2", 32, 10)
        dtnn.pytorch.load_into(exp, source)
        outputs.append(exp.predict(images.transpose(0, 2, 3, 1).copy()))
    assert np.array_equal(outputs[0], outputs[1]) and np.array_equal(outputs[0], outputs[2])
    assert np.abs(outputs[0] - torch_probabilities(net, images)).max() < 1e-5
