"""Per-step CPU budget of three-view-to-isometric cut sets (``questions.cut_budget_s``, spare_gen.stages.questions.tasks.three_view_to_isometric.child).

A real CSG model through the real worker-side path (run_unit -> isolated child -> forked copy per cut set);
the ``slow_boolean`` test hook makes the set's first boolean burn CPU until the budget stops it.
"""

from __future__ import annotations

import faulthandler
import os
import signal
from pathlib import Path

import pytest

from drawings_shapes import HOLED_BOX, render_config, write_model
from spare_gen.config import load_config
from spare_gen.config.schema import DebugConfig, TaskName
from spare_gen.stages.drawings.child import draw_model
from spare_gen.stages.questions.rejections import ATTEMPT_RULES, QuestionRejection
from spare_gen.config.tasks.three_view_to_isometric import Options
from spare_gen.stages.questions.settings import QuestionSettings
from spare_gen.stages.questions.tasks import question_settings
from spare_gen.stages.questions.tasks.three_view_to_isometric import child, run_unit
from spare_gen.stages.questions.tasks.three_view_to_isometric.child import make_cut_set
from spare_gen.runner import testhooks
from spare_gen.runner.budget import BudgetedCopy, CallStatus
from spare_gen.runner.isolation import worker_executor

BUDGET_S = 1.0  # small, so the burning boolean is stopped quickly


def _unit_and_settings(tmp_path, budget_s: float) -> tuple[dict, QuestionSettings]:
    path = write_model(HOLED_BOX, tmp_path, "holed_box")
    render = render_config()
    drawing = draw_model("holed_box", path, str(tmp_path / "drawn"), render, None, "exact")
    unit = {"unit_id": "holed_box", "task": TaskName.THREE_VIEW_TO_ISOMETRIC.value, "model_id": "holed_box",
            "shape_path": path, "hlr_method": "exact",
            "framing": {"scale": drawing["model"]["scale"], "center": list(drawing["model"]["center"])}}
    config = load_config(None, [f"questions.cut_budget_s={budget_s}"])
    settings = question_settings(config, tmp_path / "out", TaskName.THREE_VIEW_TO_ISOMETRIC)
    return unit, settings


def test_an_over_budget_boolean_is_rejected_and_the_cut_set_completes_with_the_next_cutter(tmp_path):
    unit, settings = _unit_and_settings(tmp_path, BUDGET_S)
    assert settings.own(Options).cut_budget_s == BUDGET_S
    try:
        with testhooks.unit_context(settings.stage, unit["unit_id"], 0, DebugConfig(slow_boolean=[unit["unit_id"]])):
            slow = run_unit(unit, settings).record()  # as its unit file stores it
        slow_files = [(tmp_path / "out" / c["step"]).is_file() for c in slow.get("cuts", [])]
        plain = run_unit(unit, settings).record()  # the same unit without the hook (its files replace the first run's)
    finally:
        worker_executor().close()
    assert slow["accepted"], slow
    rule = QuestionRejection.CUT_BOOLEAN_OVER_BUDGET
    assert rule in ATTEMPT_RULES and slow["attempt_rejections"].get(rule.value) == 1, slow["attempt_rejections"]
    [over] = slow["over_budget"]
    assert (over["cut"], over["attempt"], over["step"]) == (0, 0, "boolean")
    assert BUDGET_S < over["cpu_s"] < BUDGET_S + 0.5  # stopped right after its budget, not at the unit's
    assert slow["cuts"][0]["attempt"] >= 1  # cut 0 came from a later cutter
    assert slow_files == [True] * 4
    assert plain["accepted"] and not plain["over_budget"]
    assert rule.value not in plain["attempt_rejections"]
    assert plain["cuts"][0]["attempt"] == 0


def _cut_set_and_files(unit: dict, settings: QuestionSettings) -> tuple[dict, dict]:
    result = make_cut_set(unit, settings)
    out = Path(settings.out_dir)
    files = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    return {k: v for k, v in result.items() if k != "timings"}, files


def test_the_held_cut_set_gives_the_same_cuts_sent_inherited_or_made_again_in_a_fresh_copy(tmp_path, monkeypatch):
    unit, settings = _unit_and_settings(tmp_path, 5.0)
    try:
        inherited = _cut_set_and_files(unit, settings)  # the first set of a process: the copy is forked with it
        sent = _cut_set_and_files(unit, settings)  # the live copy receives the next set pickled
        call = BudgetedCopy.call

        def call_and_end(self, request):
            outcome = call(self, request)
            self.close()
            return outcome

        # every attempt in a fresh copy: it inherits the accepted cuts without drawings and makes them again
        monkeypatch.setattr(BudgetedCopy, "call", call_and_end)
        fresh = _cut_set_and_files(unit, settings)
    finally:
        child._COPY.close()
    assert inherited[0]["accepted"] and len(inherited[1]) > 4
    assert inherited == sent == fresh


def _work(state, request, mark):
    mark("boolean")
    if request == "crash":
        faulthandler.disable()  # pytest's fault handler, inherited by the fork, would print the copy's stack: a real crash, silent
        os.kill(os.getpid(), signal.SIGSEGV)
    if request == "burn":
        while True:
            pass
    return request * 2


def test_a_crashed_or_killed_copy_is_one_failed_call_and_a_fresh_copy_serves_the_next():
    copy = BudgetedCopy(_work, 0.3)
    try:
        assert copy.call(21).value == 42
        first = copy.pid
        assert copy.call("crash").status is CallStatus.CRASHED
        assert copy.call(1).value == 2 and copy.pid != first
        burnt = copy.call("burn")
        # the step's CPU is read in 10 ms clock ticks: a copy stopped just past its 0.3 s budget can read 0.30
        assert burnt.status is CallStatus.OVER_BUDGET and burnt.step == "boolean" and burnt.step_cpu_s >= 0.3
        assert copy.call(2).value == 4
        assert copy.cpu_s() >= 0.3
    finally:
        copy.close()
    assert copy.pid is None


@pytest.mark.parametrize("value", [0, -1.0])
def test_the_budget_must_be_positive(value):
    with pytest.raises(Exception, match="cut_budget_s"):
        load_config(None, [f"questions.cut_budget_s={value}"])
