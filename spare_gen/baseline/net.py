"""The baseline networks: one small convolutional encoder, scored per candidate or classified over the 4 poses.

Drawings are inverted (ink = 1, paper = 0) before the encoder so that the empty background carries no signal.
Candidate tasks follow the SPARE3D binary-classification formulation: each (F, R, T, candidate) stack is scored
separately by the same network (the query pose one-hot joins the features for pose-to-isometric) and the four
scores are a softmax over the candidates.
"""

from __future__ import annotations

import torch
from torch import nn

from spare_gen.data.torch import N_POSES

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


class CandidateScorer(nn.Module):
    """(B, 4, 12, H, W) [+ pose (B, 8)] -> (B, 4) logits, one per candidate."""

    def __init__(self, with_pose: bool = False):
        super().__init__()
        self.encoder = Encoder()
        self.with_pose = with_pose
        extra = N_POSES if with_pose else 0
        self.head = nn.Sequential(nn.Linear(self.encoder.out_features + extra, 64), nn.ReLU(inplace=True),
                                  nn.Linear(64, 1))

    def forward(self, inputs: torch.Tensor, pose: torch.Tensor | None = None) -> torch.Tensor:
        b, k = inputs.shape[:2]
        feats = self.encoder(inputs.flatten(0, 1)).view(b, k, -1)
        if self.with_pose:
            feats = torch.cat([feats, pose.unsqueeze(1).expand(b, k, -1)], dim=2)
        return self.head(feats).squeeze(-1)


class PoseClassifier(nn.Module):
    """(B, 12, H, W) -> (B, n_choices) logits over the pose choices."""

    def __init__(self, n_choices: int):
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(self.encoder.out_features, n_choices)

    def forward(self, inputs: torch.Tensor, pose: torch.Tensor | None = None) -> torch.Tensor:
        return self.head(self.encoder(inputs))
