"""spare_gen's small CNN encoder (``--arch small``), a fast sanity baseline beside SPARE3D's networks (``nets``).

Drawings are inverted (ink = 1, paper = 0) before the encoder so that the empty background carries no signal.
"""

from __future__ import annotations

import torch
from torch import nn

IN_CHANNELS = 12  # F, R, T and one more drawing, 3 channels each
WIDTHS = (16, 32, 64, 64)


class Encoder(nn.Module):
    """Strided 3x3 convolutions with batch norm, global average pooling: (B, C, H, W) -> (B, WIDTHS[-1])."""

    def __init__(self, in_channels: int = IN_CHANNELS, widths: tuple[int, ...] = WIDTHS):
        super().__init__()
        layers: list[nn.Module] = []
        prev = in_channels
        for w in widths:
            layers += [nn.Conv2d(prev, w, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True)]
            prev = w
        self.body = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.out_features = prev

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(1.0 - x)
