"""point_cloud_generation's options: how many points a target cloud has."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from spare_gen.config.base import TaskOptions


class Options(TaskOptions):
    RECORDED_IN_SUMMARY: ClassVar[tuple[str, ...]] = ("point_cloud_points",)

    point_cloud_points: Annotated[int, Field(ge=1, le=1_000_000)] = 2025
