"""The config schema, declared once: every key, its type, range and default.

Unknown keys, wrong types and out-of-range values are rejected before any work starts.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Annotated, ClassVar

from pydantic import Field, field_validator, model_validator

from spare_gen.config.base import INT64_MAX, Section
from spare_gen.config.tasks import TASK_OPTIONS, TaskName, TaskOptionsOfEveryTask


# The wireframe metrics' match tolerances (fractions of the GT bounding-box diagonal), declared here, the lowest
# layer, so the pool settings and spare_gen.metrics.catalog share one value.
CORNER_THRESHOLD = 0.02  # a predicted corner matches a GT corner at most this far away
EDGE_THRESHOLD = 0.02  # a predicted edge matches a GT edge within this segment-to-segment Hausdorff distance


class ModelSource(str, Enum):
    CSG = "csg"
    FILES = "files"
    HOUSES = "houses"


class ClusterKind(str, Enum):
    """Where the Dask workers come from."""

    LOCAL = "local"  # an embedded LocalCluster on this machine
    SCHEDULER = "scheduler"  # a running Dask scheduler (runner.scheduler) whose workers the user started
    SLURM = "slurm"  # batch jobs through dask-jobqueue, each job one worker process per core
    PBS = "pbs"
    SGE = "sge"
    LSF = "lsf"


JOBQUEUE_KINDS = (ClusterKind.SLURM, ClusterKind.PBS, ClusterKind.SGE, ClusterKind.LSF)
# dask's memory sizes ("16GB", "3.5GiB") and the queue systems' wall times ("[D-]HH:MM[:SS]")
MEMORY_PATTERN = r"^\d+(\.\d+)?\s*([kKMGTP]i?B|B)$"
WALLTIME_PATTERN = r"^(\d+-)?\d{1,4}:\d{2}(:\d{2})?$"


class JobqueueConfig(Section):
    """The batch jobs that carry the Dask workers when runner.cluster is slurm, pbs, sge or lsf (dask-jobqueue)."""

    cores: Annotated[int, Field(ge=1, le=1024)] = Field(
        1, description="cores per job; each job runs one single-threaded worker process per core")
    memory: str = Field("4GB", description="memory per job, e.g. '16GB' (split among its workers)")
    walltime: str = Field("01:00:00", description="time limit per job, [D-]HH:MM[:SS]")
    queue: str = Field("", description="queue (PBS, SGE, LSF) or partition (SLURM); empty = the system's default")
    account: str = Field("", description="account charged (SLURM, PBS) or project (SGE, LSF); empty = your default")
    job_extra_directives: list[str] = Field(
        default_factory=list, description="further scheduler directives, e.g. ['--exclusive'] or ['-l place=scatter']")
    job_script_prologue: list[str] = Field(
        default_factory=list, description="shell lines run before the worker starts, e.g. 'module load python'")
    python: str = Field("", description="Python on the compute nodes; empty = the one running spare-gen")
    jobs: Annotated[int, Field(ge=0, le=100_000)] = Field(
        1, description="jobs submitted at the start; 0 = adaptive between adaptive_min and adaptive_max jobs")
    adaptive_min: Annotated[int, Field(ge=0, le=100_000)] = Field(0, description="adaptive: fewest jobs (jobs = 0)")
    adaptive_max: Annotated[int, Field(ge=0, le=100_000)] = Field(0, description="adaptive: most jobs (jobs = 0)")
    wait_s: Annotated[float, Field(gt=0, le=7 * 86400)] = Field(
        3600.0, description="wall seconds to wait for the first worker (jobs may wait in the queue)")
    interface: str = Field("", description="network interface the scheduler and workers use, e.g. 'ib0'; empty = default")
    local_directory: str = Field("", description="node-local scratch folder for the workers; empty = Dask's default")
    log_directory: str = Field("", description="folder for the jobs' output and error files; empty = the job's cwd")
    job_name: str = Field("spare-gen", min_length=1, description="name of the jobs in the queue")

    @field_validator("memory")
    @classmethod
    def _memory_size(cls, value: str) -> str:
        if not re.match(MEMORY_PATTERN, value):
            raise ValueError("expected a size such as '16GB' or '3.5GiB'")
        return value

    @field_validator("walltime")
    @classmethod
    def _walltime_format(cls, value: str) -> str:
        if not re.match(WALLTIME_PATTERN, value):
            raise ValueError("expected [D-]HH:MM[:SS], e.g. '02:00:00' or '1-12:00:00'")
        return value

    @model_validator(mode="after")
    def _jobs_or_adaptive(self) -> "JobqueueConfig":
        """Cross-field rule: a fixed number of jobs, or an adaptive range that can start at least one."""
        if self.jobs == 0 and self.adaptive_max < 1:
            raise ValueError("jobs = 0 (adaptive) needs adaptive_max >= 1")
        if self.adaptive_min > self.adaptive_max and self.jobs == 0:
            raise ValueError(f"adaptive_min = {self.adaptive_min} is above adaptive_max = {self.adaptive_max}")
        if self.jobs > 0 and (self.adaptive_min or self.adaptive_max):
            raise ValueError("adaptive_min/adaptive_max need jobs = 0 (a fixed number of jobs or adaptive, not both)")
        return self


class RunnerConfig(Section):
    cluster: ClusterKind = Field(
        ClusterKind.LOCAL, description="local, scheduler (runner.scheduler), or batch jobs: slurm, pbs, sge, lsf")
    scheduler: str = Field("", description="tcp://HOST:PORT of a running Dask scheduler (cluster = 'scheduler')")
    jobqueue: JobqueueConfig = Field(default_factory=JobqueueConfig)
    workers: Annotated[int, Field(ge=0, le=512)] = Field(0, description="LocalCluster workers; 0 = one per core")
    timeout_s: Annotated[float, Field(gt=0, le=86400)] = Field(
        60.0, description="CPU-time budget per unit and stage (CPU, not wall time: results must not depend on load)"
    )
    shard_units: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        32, description="units per Parquet part of models, drawings and views (each part is one Dask task)"
    )
    progress: bool = True
    dashboard: bool = True

    @model_validator(mode="before")
    @classmethod
    def _scheduler_means_cluster(cls, data):
        """A scheduler address alone (the older spelling) selects cluster = 'scheduler'."""
        if isinstance(data, dict) and data.get("scheduler") and "cluster" not in data:
            data = {**data, "cluster": ClusterKind.SCHEDULER.value}
        return data

    @model_validator(mode="after")
    def _scheduler_named(self) -> "RunnerConfig":
        """Cross-field rule: cluster = 'scheduler' needs its address, and an address needs that cluster."""
        if self.cluster is ClusterKind.SCHEDULER and not self.scheduler:
            raise ValueError("cluster = 'scheduler' needs runner.scheduler = 'tcp://HOST:PORT'")
        if self.scheduler and self.cluster is not ClusterKind.SCHEDULER:
            raise ValueError(f"runner.scheduler is set but cluster = {self.cluster.value!r}; "
                             f"use one of them (cluster = 'scheduler' for a running scheduler)")
        return self


class CsgConfig(Section):
    count: Annotated[int, Field(ge=1, le=10_000_000)] = 24
    primitive_counts: list[Annotated[int, Field(ge=1, le=8)]] = Field(default_factory=lambda: [2, 3, 4], min_length=1)
    max_attempts: Annotated[int, Field(ge=1, le=1000)] = 25
    min_volume_fraction: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.05


class Footprint(str, Enum):
    """Plan shape of a procedural house (spare_gen.stages.models.houses)."""

    RECT = "rect"
    L = "l"
    T = "t"


class RoofType(str, Enum):
    GABLE = "gable"
    HIP = "hip"
    FLAT = "flat"
    SHED = "shed"


class HousesConfig(Section):
    """Procedural houses (models.source = "houses"): each index gets every roof in turn, then the next footprint."""

    count: Annotated[int, Field(ge=1, le=10_000_000)] = 24
    footprints: list[Footprint] = Field(default_factory=lambda: list(Footprint), min_length=1)
    roofs: list[RoofType] = Field(default_factory=lambda: list(RoofType), min_length=1)
    dormer_probability: Annotated[float, Field(ge=0.0, le=1.0)] = Field(
        0.5, description="chance of one or two dormers on the main roof's front slope (not on flat roofs)")
    chimney_probability: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5


class FilesConfig(Section):
    root: str = Field("", description="folder searched recursively for CAD files")
    list_file: str = Field("", description="optional text file with one CAD path per line (relative to root or the list)")
    suffixes: list[str] = Field(default_factory=lambda: [".step", ".stp", ".brep", ".brp", ".iges", ".igs"])
    max_mb: Annotated[float, Field(gt=0)] = 50.0
    limit: Annotated[int, Field(ge=0, le=INT64_MAX)] = Field(
        0, description="use at most this many files (sorted by path); 0 = all")


class ModelsConfig(Section):
    source: ModelSource = ModelSource.CSG
    csg: CsgConfig = Field(default_factory=CsgConfig)
    houses: HousesConfig = Field(default_factory=HousesConfig)
    files: FilesConfig = Field(default_factory=FilesConfig)

    @model_validator(mode="after")
    def _files_named(self) -> "ModelsConfig":
        """Cross-field rule: a files source needs a folder or a list of files (checked before any work)."""
        if self.source is ModelSource.FILES and not (self.files.root or self.files.list_file):
            raise ValueError("source = 'files' needs models.files.root (a folder) or models.files.list_file")
        return self


class HiddenStyle(str, Enum):
    RED = "red"  # SPARE3D: hidden lines solid red
    DASHED_GREY = "dashed_grey"


class HlrMethod(str, Enum):
    """Hidden-line removal: ``render.hlr`` picks one; a drawing records the algorithm that made it (exact or poly)."""

    AUTO = "auto"  # exact HLRBRep_Algo, falling back to the mesh-based HLRBRep_PolyAlgo on failure or timeout
    EXACT = "exact"  # HLRBRep_Algo on the B-rep: exact curves, can take minutes on some models
    POLY = "poly"  # HLRBRep_PolyAlgo on a triangulation: fast and robust, polygonal silhouettes


class DrawingStore(str, Enum):
    """Where the drawings stage puts its SVG and PNG bytes."""

    FILES = "files"  # drawings/<model_id>/<view>.svg|png
    PARQUET = "parquet"  # in views.parquet: png_image (Hugging Face Image struct), svg_text; no drawing files


class LineWidthRule(str, Enum):
    """What ``render.visible_width`` and ``render.hidden_width`` measure."""

    PIXELS = "pixels"  # output pixels, the same for every model
    # model units, scaled with the drawing as the original's SVG strokes were (cairosvg ignores
    # ``vector-effect: non-scaling-stroke``): px = width x the drawing's canvas pixels per model unit
    MODEL_UNITS = "model_units"


class DrawingPreset(str, Enum):
    """How drawings are made: spare_gen's own rule, or the original SPARE3D generator's (model2svg.py + svg2png.py)."""

    SPARE_GEN = "spare_gen"  # one framing per model (projected 3D box centre, margin rule), smooth edges, butt caps
    # sharp + silhouette edges, each view centred on its lines, viewBox side 1.7 x the largest edge of OCCT's B-rep
    # box (BRepBndLib::Add without triangulation, as the original computed it on the STEP-read shape; loose on tori)
    SPARE3D_CSG = "spare3d_csg"
    SPARE3D_ABC = "spare3d_abc"  # as spare3d_csg with side 1.4 x the largest edge of that B-rep box


# Line widths (px) of the spare3d presets unless set (line_width_rule = "pixels"): what the original pipeline gives at
# SPARE3D-CSG's typical model scale (stroke 0.7 / 0.35 model units, which cairosvg scales with the viewBox: about
# 2 px black and 1 px red). With line_width_rule = "model_units" the widths default to those strokes, 0.7 / 0.35.
SPARE3D_VISIBLE_WIDTH = 2.0
SPARE3D_HIDDEN_WIDTH = 1.0


class RenderConfig(Section):
    LATER_OPTIONS: ClassVar[frozenset[str]] = frozenset({"line_width_rule", "loose_edges"})

    enabled: bool = True
    size: Annotated[int, Field(ge=32, le=4096)] = 200
    margin: Annotated[float, Field(ge=1.0, le=3.0)] = Field(
        1.15, description="canvas side = margin x the model's largest projected extent over all 11 poses"
    )
    visible_width: Annotated[float, Field(gt=0, le=20)] = 0.7
    hidden_width: Annotated[float, Field(gt=0, le=20)] = 0.35
    line_width_rule: LineWidthRule = Field(
        LineWidthRule.PIXELS,
        description="pixels: visible_width / hidden_width are output pixels, the same for every model. model_units: "
                    "they are model units scaled with the drawing, as the original SPARE3D generator's strokes were "
                    "(px = width x canvas pixels per model unit: a 0.7-unit line drawn at 20 px per unit is 14 px "
                    "wide), so small models get thick lines and large ones thin lines; with a spare3d preset the "
                    "widths then default to the original's 0.7 / 0.35, which suit models of the original's size "
                    "(about 41 units across); spare_gen's CSG models are about one unit across, see "
                    "configs/spare3d_csg_original.toml",
    )
    hidden_style: HiddenStyle = HiddenStyle.RED
    loose_edges: bool = Field(
        False, description="draw the edges that bound no face (datum axes, construction lines of Pro/E and CATIA "
                           "exports) and frame the drawing with them; off: they are left out of the drawing and its "
                           "framing, and counted in drawings.parquet (n_loose_edges)",
    )
    hlr: HlrMethod = HlrMethod.AUTO
    exact_timeout_s: Annotated[float, Field(gt=0, le=3600)] = Field(
        20.0, description="per-model CPU-time budget for exact HLR before the mesh fallback"
    )
    deflection: Annotated[float, Field(gt=0, le=0.1)] = Field(
        0.002, description="curve discretisation tolerance, as a fraction of the model's bounding-box diagonal"
    )
    png: bool = True
    store: DrawingStore = Field(
        DrawingStore.FILES,
        description="files: drawings/<model_id>/<view>.svg|png; parquet: no drawing files, the PNG bytes (as a "
                    "Hugging Face Image struct, png_image) and the SVG text (svg_text) go into the views.parquet "
                    "parts; svg/png keep the logical paths, and loaders, validate and the other commands read both",
    )
    tiny_fraction: Annotated[float, Field(ge=0, le=1)] = Field(
        0.05, description="flag a model whose F, T or R drawing extent is below this fraction of the canvas"
    )
    random_views: Annotated[int, Field(ge=0, le=1000)] = Field(
        0, description="extra views from random viewpoints per model (for pose-regression baselines)"
    )
    preset: DrawingPreset = Field(
        DrawingPreset.SPARE_GEN,
        description="spare3d_csg / spare3d_abc draw like the original generator (edge classes, per-view centring, "
                    "viewBox rule, round caps, widths 2 / 1 px unless visible_width / hidden_width or "
                    "line_width_rule are set)",
    )

    @model_validator(mode="after")
    def _preset_widths(self):
        if self.preset is not DrawingPreset.SPARE_GEN and self.line_width_rule is LineWidthRule.PIXELS:
            # object.__setattr__: a plain default swap that must not re-run validation (validate_assignment)
            if "visible_width" not in self.model_fields_set:
                object.__setattr__(self, "visible_width", SPARE3D_VISIBLE_WIDTH)
            if "hidden_width" not in self.model_fields_set:
                object.__setattr__(self, "hidden_width", SPARE3D_HIDDEN_WIDTH)
        return self


class Primitive(str, Enum):
    """The CSG primitive kinds, centred on the origin (cylinder, cone and torus about Z): the CSG generator
    (``spare_gen.stages.models.csg``), the builder (``spare_gen.cad.build``) and both cutter families draw from
    these."""

    BOX = "box"
    SPHERE = "sphere"
    CYLINDER = "cylinder"
    CONE = "cone"
    TORUS = "torus"


# The principal axes a CSG primitive or cutter is turned about (in quarter turns), with their directions.
ROTATION_AXES: dict[str, tuple[float, float, float]] = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0),
                                                        "z": (0.0, 0.0, 1.0)}


class ModelReuse(str, Enum):
    """Whether a model may serve more than one task."""

    ONCE = "once"  # each model serves at most one question in the whole dataset
    # each task draws from every usable model (at most one question per model and task), as the original generator
    # did; a model keeps one split in every task (splits stay model-disjoint across the dataset)
    PER_TASK = "per_task"


class CommonQuestionsConfig(Section):
    """The question stage's options every task shares (``QuestionsConfig`` adds each task's own)."""

    LATER_OPTIONS: ClassVar[frozenset[str]] = frozenset({"model_reuse"})

    enabled: bool = True
    counts: dict[TaskName, Annotated[int, Field(ge=0, le=INT64_MAX)]] = Field(
        default_factory=lambda: {t: 3 for t in TaskName}, description="questions per task (all splits)"
    )
    split: tuple[float, float, float] = (0.8, 0.1, 0.1)
    allow_fewer: bool = False
    duplicate_tolerance_px: Annotated[float, Field(ge=0)] = Field(
        1.5, description="candidates whose symmetric chamfer distance is below this (pixels) count as the same drawing"
    )
    model_reuse: ModelReuse = Field(
        ModelReuse.ONCE,
        description="once: each model serves at most one question in the whole dataset. per_task: every task "
                    "draws from all usable models (one question per model and task, the same models first), as "
                    "the original generator did, so N usable models give up to N questions per task; a model "
                    "keeps its split in every task",
    )
    allow_flagged_cad: bool = Field(
        False, description="also make questions from CAD models the quality gate flagged (invalid B-rep, disjoint solids)"
    )

    @field_validator("split")
    @classmethod
    def _split_fractions(cls, v: tuple[float, float, float]) -> tuple[float, float, float]:
        """Cross-field rule, checked with the config (before any work): train, val, test fractions summing to 1."""
        if any(f < 0 or f > 1 for f in v):
            raise ValueError("train, val, test fractions must each be between 0 and 1")
        if v[0] <= 0:
            raise ValueError("the train fraction must be above 0")
        if abs(sum(v) - 1.0) > 1e-6:
            raise ValueError(f"train, val, test fractions must sum to 1 (they sum to {sum(v):g})")
        return v


class QuestionsConfig(TaskOptionsOfEveryTask, CommonQuestionsConfig):
    """The ``[questions]`` table: the common options, then each task's own (``spare_gen.config.tasks``), whose keys
    sit in the same table."""

    LATER_OPTIONS: ClassVar[frozenset[str]] = CommonQuestionsConfig.LATER_OPTIONS.union(
        *(section.LATER_OPTIONS for section in TASK_OPTIONS.values()))


class PredictionUnits(str, Enum):
    """Coordinates of imported predictions (spare_gen.rating.predictions)."""

    MODEL = "model"  # the CAD model's own (wireframes.parquet: vertices * scale + centre)
    NORMALISED = "normalised"  # the ground truth's normalised ones (bounding-box centre 0, diagonal 1)


class HouseWireframe(str, Enum):
    """Which edges of a procedural house make its ground-truth wireframe."""

    BUILDING = "building"  # every feature edge: ground outline, walls, roof, dormers, chimneys
    ROOF = "roof"  # no edge that touches the ground: the roof, its dormers and chimneys (as S23DR / Building3D)


class PoolConfig(Section):
    enabled: bool = True
    models: Annotated[int, Field(ge=0, le=INT64_MAX)] = Field(
        4, description="ground truths in the pool (0 = every usable model)")
    deflection: Annotated[float, Field(gt=0, le=0.2)] = Field(
        0.01, description="curved-edge discretisation tolerance, fraction of the bounding-box diagonal"
    )
    corner_threshold: Annotated[float, Field(gt=0)] = CORNER_THRESHOLD
    edge_threshold: Annotated[float, Field(gt=0)] = EDGE_THRESHOLD
    image_size: Annotated[int, Field(ge=64, le=4096)] = 384
    max_pairs_per_model: Annotated[int, Field(ge=0, le=INT64_MAX)] = Field(0, description="0 = all pairs")
    repeat_fraction: Annotated[float, Field(ge=0, le=0.5)] = 0.05
    predictions: str = Field("", description="folder of methods' predicted wireframes, <method>/<model_id>.json|.obj "
                             "(spare_gen.rating.predictions); empty = corruptions only")
    house_wireframe: HouseWireframe = Field(
        HouseWireframe.BUILDING, description="procedural houses (models.source = 'houses'): the whole building's "
        "edges, or the roof's only (no ground outline, no walls below the eaves), like the S23DR and Building3D "
        "ground truths")
    prediction_units: PredictionUnits = Field(PredictionUnits.MODEL, description="coordinates of the predictions: "
                                              "model (the CAD model's) or normalised (the ground truth's, diagonal 1)")


SPARE3D_CITATION = """@inproceedings{han2020spare3d,
  title     = {{SPARE3D}: A Dataset for {SPA}tial {RE}asoning on Three-View Line Drawings},
  author    = {Han, Wenyu and Xiang, Siyuan and Liu, Chenhui and Wang, Ruoyu and Feng, Chen},
  booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},
  pages     = {14690--14699},
  year      = {2020}
}"""


class CardConfig(Section):
    """What the dataset card (the Hugging Face README) declares about the published dataset."""

    pretty_name: str = "SPARE3D-style spatial reasoning (spare_gen)"
    license: str = Field("cc-by-4.0", description="Hugging Face license id of the generated dataset")
    citation: str = Field("", description="BibTeX of this dataset (optional); SPARE3D's citation is always included")
    spare3d_citation: str = Field(SPARE3D_CITATION, description="BibTeX of SPARE3D (Han et al., CVPR 2020)")


class DebugConfig(Section):
    """Test hooks (spare_gen.runner.testhooks): entries are <unit_id>, <stage>:<unit_id> or <stage>-<phase>:<unit_id>."""

    hang: list[str] = Field(default_factory=list, description="units whose child call burns CPU forever (tests)")
    crash: list[str] = Field(default_factory=list, description="units whose child calls os.abort() (tests)")
    sigkill: list[str] = Field(default_factory=list, description="units whose child is SIGKILLed (machine fault)")
    enospc: list[str] = Field(default_factory=list, description="units whose child hits 'no space left' (machine fault)")
    broken_hlr: list[str] = Field(default_factory=list, description="units whose exact HLR gets a far-away point")
    missing_hlr_line: list[str] = Field(default_factory=list,
                                        description="units whose exact HLR loses the far tenth of each view's lines")
    slow_boolean: list[str] = Field(default_factory=list,
                                    description="units whose first cut-set boolean burns CPU until its budget stops it")
    transient_attempts: Annotated[int, Field(ge=0, le=1000)] = Field(
        1, description="machine-fault hooks fire on this many attempts of a unit (more than the retries: persistent)"
    )


class Config(Section):
    seed: Annotated[int, Field(ge=0, le=INT64_MAX)] = 0
    out: str = "outputs/default"
    runner: RunnerConfig = Field(default_factory=RunnerConfig)
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    render: RenderConfig = Field(default_factory=RenderConfig)
    questions: QuestionsConfig = Field(default_factory=QuestionsConfig)
    pool: PoolConfig = Field(default_factory=PoolConfig)
    card: CardConfig = Field(default_factory=CardConfig)
    debug: DebugConfig = Field(default_factory=DebugConfig)

    @model_validator(mode="after")
    def _task_rules(self) -> "Config":
        """Cross-section rules the tasks' options declare (``TaskOptions.check_config``)."""
        for section in TASK_OPTIONS.values():
            section.check_config(self)
        return self
