"""``--arch hypotheses``: networks built from what the multiple-choice tasks ask, trainable on a CPU.

Every choice of isometric_to_pose, pose_to_isometric and three_view_to_isometric is a drawing at a known pose: a
pose offered for the one isometric drawing (isometric_to_pose), or a candidate drawing at the question's query pose
(pose_to_isometric) or at pose 2 (three_view_to_isometric). For each choice, ``spare_gen.baseline.pose_hypotheses``
re-arranges F, R and T as the model would show them in that pose (a turn or a mirror of each drawing, exact) and warps
each onto the face of the model's box where the canonical pose would show it; the choice's drawing is turned back
into the canonical pose. One small convolutional scorer, shared by all choices, reads the drawing (visible and hidden
ink) stacked with the three warped views and gives one number; the logits are the four numbers.

What follows from the design:

* it learns from comparisons at the same pixel (the scorer needs no long-range reasoning), and each question trains
  the scorer on one right and three wrong arrangements;
* it is equivariant by construction: turning every model a quarter about +Z relabels the answers and nothing else;
* its blank-views twin sees the same inputs for every choice where the choices differ only in the views (the upper
  poses 1-4 of isometric_to_pose): its logits tie, so it answers the first choice, chance by construction. Where a
  choice also turns the drawing (the paper's poses 5 and 6, seen from below), or the choices are different
  drawings (the candidate tasks), the twin can learn what the drawings alone tell, and its curve shows how much.

Input: the feed's batch (``views`` (B, 9, H, W) F, R, T in RGB; ``drawing`` (B, 3, H, W) or ``candidates``
(B, K, 3, H, W), and ``pose`` (B, 8) one-hot where the task has a query pose; floats in [0, 1], any size); the
network turns each drawing into ink channels (visible = black, hidden = red lines of the SPARE3D style) and works at
``WORK_SIZE`` pixels.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from spare_gen.baseline.pose_hypotheses import face_warps, gather_index, hypotheses
from spare_gen.canvas.poses import ISOMETRIC_VIEWS

WORK_SIZE = 64  # pixels: lines of a 200 px drawing stay visible as grey, and the scorer costs 17 M MACs
WIDTH = 32
INK_THRESHOLD = 0.15  # ink above this counts for a view's extent (the model's box)
ALL_POSES = tuple(int(v) for v in ISOMETRIC_VIEWS)  # 1..8, the order of a one-hot query pose
CANONICAL_POSE = 1  # the pose every query pose's candidates are turned back into


def ink(rgb: torch.Tensor, size: int = WORK_SIZE) -> torch.Tensor:
    """(N, 3, H, W) RGB in [0, 1] -> (N, 2, size, size): visible ink (dark in every channel) and hidden ink (red)."""
    visible = 1.0 - rgb.amax(dim=1)
    hidden = (rgb[:, 0] - rgb[:, 1]).clamp(min=0.0)
    out = torch.stack([visible, hidden], 1)
    return out if out.shape[-1] == size else F.interpolate(out, size=(size, size), mode="area")


def extents(images: torch.Tensor) -> torch.Tensor:
    """(N, S, S) ink -> (N, 2): the width and height of the inked box in pixels (0 for blank paper)."""
    size = images.shape[-1]
    inked = images > INK_THRESHOLD
    out = []
    for profile in (inked.any(dim=-2), inked.any(dim=-1)):
        p = profile.to(torch.uint8)
        first = p.argmax(dim=-1)
        last = size - 1 - p.flip(-1).argmax(dim=-1)
        out.append(torch.where(profile.any(dim=-1), (last - first + 1).float(), torch.zeros(first.shape)))
    return torch.stack(out, -1)


def _block(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Scorer(nn.Module):
    """(N, 5, S, S) -> (N,): six 3 x 3 convolutions (three of stride 2) and a two-layer head on the 8 x 8 map."""

    def __init__(self, size: int = WORK_SIZE, width: int = WIDTH):
        super().__init__()
        w = width
        self.features = nn.Sequential(_block(5, w // 2, 2), _block(w // 2, w), _block(w, w, 2), _block(w, 2 * w),
                                      _block(2 * w, 2 * w, 2), _block(2 * w, 2 * w))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(2 * w * (size // 8) ** 2, 64), nn.ReLU(inplace=True),
                                  nn.Dropout(0.3), nn.Linear(64, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x)).squeeze(1)


class _ViewsOnFaces(nn.Module):
    """What both hypotheses networks share: per hypothesis, F, R and T re-arranged as the turned model shows them and
    warped onto the faces of its box in the canonical pose's drawing (``warp=False``: as drawn), a drawing turned
    back into the canonical pose, and one scorer for every (drawing, views) stack."""

    def __init__(self, hypotheses_: tuple, *, warp: bool = True, size: int = WORK_SIZE, width: int = WIDTH):
        super().__init__()
        self.size, self.warp = size, warp
        self.hypotheses = hypotheses_
        self.warps = face_warps(self.hypotheses[0].canonical)
        for i, h in enumerate(self.hypotheses):
            self.register_buffer(f"iso_{i}", torch.from_numpy(gather_index(torch.tensor(h.t).inverse().numpy(),
                                                                           size)), persistent=False)
            for j, v in enumerate(h.views):
                self.register_buffer(f"view_{i}_{j}", torch.from_numpy(gather_index(v.a, size)), persistent=False)
        self.scorer = Scorer(size, width)

    @staticmethod
    def _gather(images: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return images.flatten(-2).index_select(-1, index).view(images.shape)

    def _on_faces(self, views: torch.Tensor) -> torch.Tensor:
        """(B, 3, S, S) F', R', T' -> the same, each warped onto its face in the canonical pose's drawing."""
        b, _, s, _ = views.shape
        c = (s - 1) / 2
        front, right = extents(views[:, 0]), extents(views[:, 1])
        box = torch.stack([front[:, 0], right[:, 0], front[:, 1]], 1)  # X, Y, Z of the model's box in pixels
        out = []
        for j, w in enumerate(self.warps):
            m = torch.tensor(w.m_inv, dtype=views.dtype)
            offset = w.sign * box[:, w.depth_axis:w.depth_axis + 1] / 2 * torch.tensor(w.offset_per_depth,
                                                                                       dtype=views.dtype)
            theta = torch.zeros(b, 2, 3, dtype=views.dtype)
            theta[:, 0, 0], theta[:, 0, 1] = m[0, 0], -m[0, 1]
            theta[:, 1, 0], theta[:, 1, 1] = -m[1, 0], m[1, 1]
            theta[:, 0, 2] = -(m[0, 0] * offset[:, 0] + m[0, 1] * offset[:, 1]) / c
            theta[:, 1, 2] = (m[1, 0] * offset[:, 0] + m[1, 1] * offset[:, 1]) / c
            grid = F.affine_grid(theta.to(views.device), [b, 1, s, s], align_corners=True)
            out.append(F.grid_sample(views[:, j:j + 1], grid, align_corners=True))
        return torch.cat(out, 1)

    def views_ink(self, views: torch.Tensor) -> torch.Tensor:
        """(B, 9, H, W) F, R, T in RGB -> (B, 3, S, S): each view's ink, hidden and visible alike."""
        b = views.shape[0]
        out = ink(views.reshape(b * 3, 3, *views.shape[-2:]), self.size).sum(1).clamp(max=1.0)
        return out.view(b, 3, self.size, self.size)

    def turned_views(self, views: torch.Tensor, i: int) -> torch.Tensor:
        """(B, 3, S, S) views ink -> hypothesis ``i``'s F, R, T, on their faces unless ``warp`` is off."""
        turned = torch.stack([self._gather(views[:, v.source], getattr(self, f"view_{i}_{j}"))
                              for j, v in enumerate(self.hypotheses[i].views)], 1)
        return self._on_faces(turned) if self.warp else turned

    def turned_back(self, drawings: torch.Tensor, i: int) -> torch.Tensor:
        """(..., S, S) ink of drawings shown as hypothesis ``i``'s pose -> the same as the canonical pose shows it."""
        return self._gather(drawings, getattr(self, f"iso_{i}"))

    def score(self, stacks: torch.Tensor) -> torch.Tensor:
        """(B, K, 5, S, S) -> logits (B, K)."""
        b, k = stacks.shape[:2]
        return self.scorer(stacks.flatten(0, 1)).view(b, k)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.score(self.stacks(batch))


class PoseHypotheses(_ViewsOnFaces):
    """Logits (B, K) over the choice poses ``choice_poses`` (the dataset's ``pose_choices`` set, answer order).
    ``warp=False`` stacks the re-arranged views as drawn, without placing them on their faces (the ablation)."""

    def __init__(self, choice_poses: tuple[int, ...], *, warp: bool = True, size: int = WORK_SIZE,
                 width: int = WIDTH):
        super().__init__(hypotheses(tuple(int(p) for p in choice_poses)), warp=warp, size=size, width=width)

    def stacks(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """(B, K, 5, S, S): per choice, the isometric drawing's two ink channels and the three re-arranged views."""
        iso = ink(batch["drawing"], self.size)
        views = self.views_ink(batch["views"])
        return torch.stack([torch.cat([self.turned_back(iso, i), self.turned_views(views, i)], 1)
                            for i in range(len(self.hypotheses))], 1)


class CandidateHypotheses(_ViewsOnFaces):
    """Logits (B, K) over candidate drawings that all show one pose: the task's ``fixed_pose`` (three_view_to_isometric's
    pose 2), or else each question's own query pose (``batch["pose"]``, one-hot over poses 1-8: pose_to_isometric).
    The views are re-arranged and warped once per question for its pose; each candidate, turned back into the
    canonical pose, is stacked with them and scored by the one scorer."""

    def __init__(self, fixed_pose: int | None = None, *, warp: bool = True, size: int = WORK_SIZE,
                 width: int = WIDTH):
        poses = (int(fixed_pose),) if fixed_pose is not None else (CANONICAL_POSE, *ALL_POSES)
        hyps = hypotheses(poses)
        super().__init__(hyps if fixed_pose is not None else hyps[1:], warp=warp, size=size, width=width)
        self.fixed_pose = fixed_pose

    def stacks(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """(B, K, 5, S, S): per candidate, its two ink channels and the three re-arranged views of its pose."""
        cands = batch["candidates"]
        b, k = cands.shape[:2]
        cands = ink(cands.flatten(0, 1), self.size).view(b, k, 2, self.size, self.size)
        views = self.views_ink(batch["views"])
        which = (torch.zeros(b, dtype=torch.long, device=cands.device) if self.fixed_pose is not None
                 else batch["pose"].argmax(dim=1))
        out = cands.new_zeros(b, k, 5, self.size, self.size)
        for i in which.unique().tolist():
            rows = (which == i).nonzero().squeeze(1)
            turned = self.turned_views(views.index_select(0, rows), i)
            drawn = self.turned_back(cands.index_select(0, rows), i)
            out[rows] = torch.cat([drawn, turned.unsqueeze(1).expand(-1, k, -1, -1, -1)], 2)
        return out
