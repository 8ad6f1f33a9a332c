"""SPARE3D's baseline networks in plain torch: VGG-16, ResNet-50 and BagNet-33 with the supplementary's changes.

Layer for layer as torchvision's ``vgg16`` and ``resnet50`` and bag-of-local-features-models' ``bagnet33``
(``bagnets/pytorchnet.py``), built here because torchvision does not load with every torch wheel. SPARE3D
(supplementary C) changes only the first convolution and the last fully-connected layer, both replaced after the
network is built, as its ``model.py`` files do, so both keep torch's default initialisation:

* VGG-16 and ResNet-50: first convolution ``in_channels -> 64``, 3 x 3, stride 1, padding 1, with a bias (ResNet's
  original is 7 x 7, stride 2, padding 3, without); BagNet-33: ``in_channels -> 64``, 1 x 1, stride 1, padding 0,
  no bias (as the original).
* The last fully-connected layer maps 4096 (VGG) or 2048 (ResNet, BagNet) features to the head's width.

The task models take the device batch of ``spare_gen.data.feed`` (float images in [0, 1]: ``views`` (B, 9, H, W);
``candidates`` (B, K, 3, H, W) or ``drawing`` (B, 3, H, W); ``pose`` (B, 8)) and return logits, (B, K) or (B, 4):
the F/R/T stack goes to the device once per question and is broadcast to each candidate here.
"""

from __future__ import annotations

import torch
from torch import nn

from spare_gen.baseline.net import Encoder
from spare_gen.baseline.options import CODE_DIM, POSE_METRIC_DIM, Arch, Formulation
from spare_gen.data.torch import N_POSES

VGG16_LAYERS = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")
RESNET50_BLOCKS = (3, 4, 6, 3)
BAGNET33_STRIDES = (2, 2, 2, 1)
WIDTHS = (64, 128, 256, 512)  # bottleneck widths of ResNet-50 and BagNet-33 (x 4 out)
EXPANSION = 4
VIEW_CHANNELS, DRAWING_CHANNELS = 9, 3


def _torchvision_init(model: nn.Module) -> None:
    """torchvision's initialisation: Kaiming-normal (fan out) convolutions, unit batch norms, N(0, 0.01) linears."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0, 0.01)
            nn.init.zeros_(m.bias)


class VGG16(nn.Module):
    """torchvision's ``vgg16`` (configuration D, no batch norm): 13 convolutions, 7 x 7 adaptive pool, 3 linears."""

    def __init__(self, in_channels: int, out_features: int):
        super().__init__()
        layers: list[nn.Module] = []
        prev = in_channels
        for v in VGG16_LAYERS:
            if v == "M":
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            else:
                layers += [nn.Conv2d(prev, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
                prev = v
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(),
                                        nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(),
                                        nn.Linear(4096, out_features))
        _torchvision_init(self)
        self.features[0].reset_parameters()  # SPARE3D replaces the first convolution and the last linear
        self.classifier[6].reset_parameters()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


class Bottleneck(nn.Module):
    """ResNet's 1x1 -> kxk -> 1x1 block (stride on the kxk, torchvision's v1.5), x4 widening.

    ``padding=None`` pads the kxk to keep the size (ResNet); ``0`` leaves it unpadded (BagNet), and the shortcut is
    then cropped at the bottom-right to the output's size, as BagNet does."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1, kernel: int = 3, padding: int | None = None,
                 downsample: nn.Module | None = None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel, stride=stride,
                               padding=(kernel - 1) // 2 if padding is None else padding, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * EXPANSION, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * EXPANSION)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        shortcut = x if self.downsample is None else self.downsample(x)
        crop = shortcut.size(-1) - out.size(-1)
        if crop:
            shortcut = shortcut[:, :, :-crop, :-crop]
        return self.relu(out + shortcut)


def _stage(inplanes: int, planes: int, blocks: int, stride: int, first_kernel: int, padding: int | None
           ) -> nn.Sequential:
    """One stage: a first block (stride, kernel ``first_kernel``, projected shortcut), then ``blocks - 1`` more
    (3 x 3 in ResNet; 1 x 1 in BagNet-33, whose stages have one 3 x 3 block each)."""
    downsample = None
    if stride != 1 or inplanes != planes * EXPANSION:
        downsample = nn.Sequential(nn.Conv2d(inplanes, planes * EXPANSION, 1, stride=stride, bias=False),
                                   nn.BatchNorm2d(planes * EXPANSION))
    rest_kernel = 3 if padding is None else 1
    return nn.Sequential(Bottleneck(inplanes, planes, stride, first_kernel, padding, downsample),
                         *(Bottleneck(planes * EXPANSION, planes, 1, rest_kernel, padding) for _ in range(blocks - 1)))


class ResNet50(nn.Module):
    """torchvision's ``resnet50`` with SPARE3D's 3 x 3 / stride 1 / padding 1 first convolution."""

    def __init__(self, in_channels: int, out_features: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 64, kernel_size=3, stride=1, padding=1)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        inplanes, stages = 64, []
        for planes, blocks, stride in zip(WIDTHS, RESNET50_BLOCKS, (1, 2, 2, 2)):
            stages.append(_stage(inplanes, planes, blocks, stride, 3, None))
            inplanes = planes * EXPANSION
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * EXPANSION, out_features)
        _torchvision_init(self)
        self.conv1.reset_parameters()
        self.fc.reset_parameters()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class BagNet33(nn.Module):
    """bag-of-local-features-models' ``bagnet33``: 1 x 1 then unpadded 3 x 3 stem, ResNet-50's stages with one
    unpadded 3 x 3 block each (strides 2, 2, 2, 1), so every output sees a 33 x 33 patch; average over patches."""

    def __init__(self, in_channels: int, out_features: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 64, kernel_size=1, stride=1, padding=0, bias=False)
        self.conv2 = nn.Conv2d(64, 64, kernel_size=3, stride=1, padding=0, bias=False)
        self.bn1 = nn.BatchNorm2d(64, momentum=0.001)
        self.relu = nn.ReLU(inplace=True)
        inplanes, stages = 64, []
        for planes, blocks, stride in zip(WIDTHS, RESNET50_BLOCKS, BAGNET33_STRIDES):
            stages.append(_stage(inplanes, planes, blocks, stride, 3, 0))
            inplanes = planes * EXPANSION
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.fc = nn.Linear(512 * EXPANSION, out_features)
        for m in self.modules():  # BagNet's own initialisation (its linear keeps torch's default)
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, 0, (2.0 / n) ** 0.5)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        self.conv1.reset_parameters()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu(self.bn1(self.conv2(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(x.mean(dim=(2, 3)))


class Small(nn.Module):
    """spare_gen's small CNN (``net.Encoder``: 4 strided convolutions, 16-64 channels) and a linear layer."""

    def __init__(self, in_channels: int, out_features: int):
        super().__init__()
        self.encoder = Encoder(in_channels)
        self.fc = nn.Linear(self.encoder.out_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.encoder(x))


BACKBONES: dict[Arch, type[nn.Module]] = {Arch.VGG16: VGG16, Arch.RESNET50: ResNet50, Arch.BAGNET33: BagNet33,
                                          Arch.SMALL: Small}


def _stack(batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """(B*K, 12, H, W): each question's F, R, T (9 channels) before each of its K candidates."""
    views, cands = batch["views"], batch["candidates"]
    b, k = cands.shape[:2]
    return torch.cat([views.unsqueeze(1).expand(-1, k, -1, -1, -1), cands], dim=2).flatten(0, 1)


class BinaryScorer(nn.Module):
    """Supplementary B.1 / B.3 binary classification: f(F, R, T, candidate) -> one score per candidate (3-view to
    isometric: f ends in R^1; pose to isometric: f ends in R^128, the pose one-hot joins, a linear 136 -> 1)."""

    def __init__(self, arch: Arch, with_pose: bool):
        super().__init__()
        self.with_pose = with_pose
        self.model = BACKBONES[arch](VIEW_CHANNELS + DRAWING_CHANNELS, CODE_DIM if with_pose else 1)
        self.fc = nn.Linear(CODE_DIM + N_POSES, 1) if with_pose else None

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        b, k = batch["candidates"].shape[:2]
        y = self.model(_stack(batch))
        if self.with_pose:
            y = self.fc(torch.cat([y, batch["pose"].repeat_interleave(k, dim=0)], dim=1))
        return y.view(b, k)


class MetricScorer(nn.Module):
    """Supplementary B.1 / B.3 metric learning: f(F, R, T) and g(candidate) codes, logits = minus their L2 distance
    (3-view to isometric: both R^128; pose to isometric: f's R^128 and the pose one-hot through a linear 136 -> 50,
    g in R^50)."""

    def __init__(self, arch: Arch, with_pose: bool):
        super().__init__()
        self.with_pose = with_pose
        self.model_3v = BACKBONES[arch](VIEW_CHANNELS, CODE_DIM)
        self.fc_3v = nn.Linear(CODE_DIM + N_POSES, POSE_METRIC_DIM) if with_pose else None
        self.model_ortho = BACKBONES[arch](DRAWING_CHANNELS, POSE_METRIC_DIM if with_pose else CODE_DIM)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        cands = batch["candidates"]
        b, k = cands.shape[:2]
        code = self.model_3v(batch["views"])
        if self.with_pose:
            code = self.fc_3v(torch.cat([code, batch["pose"]], dim=1))
        answer = self.model_ortho(cands.flatten(0, 1)).view(b, k, -1)
        return -torch.linalg.vector_norm(answer - code.unsqueeze(1) + 1e-6, dim=2)  # pairwise_distance's eps


class Classifier(nn.Module):
    """Supplementary B.2 multi-class classification: f(F, R, T, isometric) -> R^4, one logit per pose choice."""

    def __init__(self, arch: Arch, n_choices: int):
        super().__init__()
        self.model = BACKBONES[arch](VIEW_CHANNELS + DRAWING_CHANNELS, n_choices)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.model(torch.cat([batch["views"], batch["drawing"]], dim=1))


def make_model(formulation: Formulation, arch: Arch, *, with_pose: bool = False, n_choices: int = 4) -> nn.Module:
    if formulation is Formulation.MULTICLASS:
        return Classifier(arch, n_choices)
    return (BinaryScorer if formulation is Formulation.BINARY else MetricScorer)(arch, with_pose)
