"""point_cloud_generation's options: how many points a target cloud has."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from spare_gen.config.base import TaskOptions


class Options(TaskOptions):
    point_cloud_points: Annotated[int, Field(ge=1, le=1_000_000)] = 2025
