"""three_view_to_isometric: given F, R, T, choose the pose-2 drawing among 4 cut objects of one model.

The task's spec and worker side. Its rule lives in this folder: the cutter families (the table ``families.py``;
their cutters and rules ``cutters.py``, ``cutters_spare3d.py``), the typed cut job and the rules' constants
(``job.py``), and the cut set made in the isolated child (``child.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from spare_gen.config.tasks.three_view_to_isometric import CutterFamily, Options
from spare_gen.stages.questions.dataset import LoadedDataset, distinct_candidates, question_id
from spare_gen.stages.questions.layout import N_CANDIDATES, TARGET_POSE, AnswerSide, pose_view
from spare_gen.stages.questions.row_parts import Accepted, arrange, three_view_fields
from spare_gen.stages.questions.schema import (
    CANDIDATE_PREFIX, CUT_VIEW_DRAWING, CutViewRow, QuestionCommon, answer_choice, candidate_drawings,
)
from spare_gen.stages.questions.settings import QuestionResult, QuestionSettings, QuestionUnit
from spare_gen.stages.questions.sheet_cells import Cell, drawing_cell
from spare_gen.stages.questions.spec import LoaderKeys, PaperRecipes, Spare3dLayout, TaskSpec, UnitInput
from spare_gen.stages.questions.tasks.three_view_to_isometric.families import CUTTER_FAMILIES
from spare_gen.stages.questions.tasks.three_view_to_isometric.job import CUT_TIMEOUT_FACTOR, TASK
from spare_gen.stages.questions.worker import run_in_child
from spare_gen.rng import derive_rng
from spare_gen.rows import column

def run_unit(unit: QuestionUnit, settings: QuestionSettings) -> QuestionResult:
    return run_in_child(f"{__name__}.child:cut_set_unit", unit, settings,
                        timeout=settings.timeout_s * CUT_TIMEOUT_FACTOR)


def build_row(seed: int, item: Accepted, answer: int, **_) -> dict:
    cuts = item.result.own["cuts"]  # cut 0 is the source of F, R, T and of the correct answer
    order = arrange(0, list(range(1, len(cuts))), answer,
                    derive_rng(seed, "questions", TASK.value, item.model_id, "order"))
    arranged = [cuts[k] for k in order]
    target = pose_view(TARGET_POSE)
    return {
        **three_view_fields(cuts[0]["views"]),
        "candidate_svg": [c["views"][target]["svg"] for c in arranged],
        "candidate_png": [c["views"][target]["png"] for c in arranged],
        "answer": answer,
        "candidate_step": [c["step"] for c in arranged],
        "cutters": json.dumps([c["cutter"] for c in arranged], sort_keys=True),
        "candidate_cuts": order,
    }


def cut_view_rows(item: Accepted) -> list[dict]:
    """Vector drawings of the item's cut objects (the validator re-checks rule 3 on them)."""
    return [CutViewRow(model_id=item.model_id, cut=k, view=view, **{f: v.get(f) for f in CUT_VIEW_DRAWING}).as_dict()
            for k, cut in enumerate(item.result.own["cuts"]) for view, v in sorted(cut["views"].items())]


def check_row(ds: LoadedDataset, row: ThreeViewToIsometricRow) -> list[str]:
    # a family whose duplicates are pixel-identical PNGs only (the original SPARE3D's) keeps every cut whose PNG differs
    recorded = ds.summary.get("cutters")
    pixel_rule = recorded in {f.value for f in CUTTER_FAMILIES} and CUTTER_FAMILIES[CutterFamily(recorded)].pixel_duplicates
    svgs = row.candidates("svg")
    bad = distinct_candidates(ds, row, list(svgs), list(row.candidates("png")),
                              None if pixel_rule else float(ds.summary["tolerance_px"]))
    a = row.answer
    if a is None or not 0 <= a < len(svgs):
        return bad
    sources = {(c["model_id"], c["cut"]) if c else None
               for c in (ds.cut_views.get(svg or "") for svg in row.three_views("svg").values())}
    ans = ds.cut_views.get(svgs[a])
    if len(sources) != 1 or not ans or sources != {(row.model_id, ans["cut"])}:
        bad.append(f"candidates: {question_id(row)}: the answer is not the cut object that gives F, R, T")
    return bad


def sheet_cells(out: Path, row: ThreeViewToIsometricRow) -> list[Cell]:
    return [drawing_cell(out, f"choice {i}", png, svg, correct=i == row.answer)
            for i, (png, svg) in enumerate(zip(row.candidates("png"), row.candidates("svg")))]


def card_options(options: Options) -> str:
    return f"three-view-to-isometric cutters `{options.cutters.value}` (`questions.cutters`)"


@dataclass(frozen=True, kw_only=True)
class ThreeViewToIsometricRow(QuestionCommon):
    """One question of three_view_to_isometric: the common columns, then the candidates, the answer and the cut
    objects behind the candidates."""

    candidate_svg: list[str] | None = candidate_drawings("SVG")
    candidate_png: list[str] | None = candidate_drawings("PNG")
    answer: int | None = answer_choice()
    candidate_step: list[str] | None = column(pa.list_(pa.string()),
                                              "STEP file of each candidate's cut object, in answer order")
    cutters: str | None = column(pa.string(),
                                 "JSON list of the cutting primitives (CSG primitive specs), in answer order")
    candidate_cuts: list[int] | None = column(
        pa.list_(pa.int32()),
        "cut object index of each candidate (cut 0 gives F, R, T), in answer order; not handed out by loaders",
        answer_key=True)


SPEC = TaskSpec(
    name=TASK,
    card_options=card_options,
    figure6=(
        PaperRecipes("binary", "supplementary C.1, binary classification", {
            "resnet50": (5e-5, 9, 50, 68.7), "vgg16": (5e-5, 20, 50, 78.1), "bagnet33": (1e-4, 8, 49, 49.4)}),
        # VGG-16's batch size is printed "g"; read as 9 (the glyph beside it on a keyboard and the shape OCR confuses).
        PaperRecipes("metric", "supplementary C.1, metric learning", {
            "resnet50": (1e-4, 4, 50, 37.7), "vgg16": (2e-5, 9, 50, 28.9), "bagnet33": (1e-4, 4, 50, 40.8)}),
    ),
    n_answers=N_CANDIDATES,
    summary="Given the F, R, T drawings, choose the matching pose-2 isometric drawing among 4. All four candidates "
            "are drawings of cut objects (the model minus one random sphere, box, cone or torus); one cut object "
            "also provides F, R, T.",
    row=ThreeViewToIsometricRow,
    build_row=build_row,
    check_row=check_row,
    sheet_cells=sheet_cells,
    loader=LoaderKeys(candidates=CANDIDATE_PREFIX),
    run_unit=run_unit,
    unit_inputs=UnitInput.SHAPE_AND_FRAMING,
    cut_view_rows=cut_view_rows,
    answer_side=AnswerSide.CANDIDATES,
    answer_side_prefix=CANDIDATE_PREFIX,
    candidate_pose=TARGET_POSE,
    choice_column=f"{CANDIDATE_PREFIX}_svg",
    spare3d=Spare3dLayout("Three_view_to_isometric", "3-View to Isometric"),
    hf_categories=("multiple-choice", "visual-question-answering"),
    human_reference=(0.805, 0.940),
    instructions="You see the front (F), right (R) and top (T) view line drawings of an object. Choose the "
                 "isometric drawing of the same object seen from pose 2 (the front-top-right corner of the pose cube) "
                 "among the four candidates.",
)
