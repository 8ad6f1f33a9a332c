"""Build the carry folders of the paper-scale Figure 6 run HERE, before any device minute is spent.

    python benchmarks/gpu/prepare_paper_scale.py --paper outputs/spare3d_csg_original \
        --default-poses outputs/spare3d_csg_original_upper --dest outputs/gpu

Exports each dataset's Isometric-to-Pose and 3-View-to-Isometric splits (those it has) as portable caches
(``spare-gen cache --export``, xz), downloads the wheels the training path needs on the device (pydantic, matplotlib and
their needs, cp312 manylinux: the device has Python 3.12 and torch, no pydantic or matplotlib), and packs them into ``DEST/call1/``,
``DEST/call2/``, ... in the order benchmarks/gpu/paper_scale.py trains them, each call under the 64 MiB a device call
carries (with the repository's tracked files and the wheels, which every call carries: a fresh machine needs them).
A split never straddles two calls. Prints, and writes to ``DEST/plan.txt``, the device command and carry of each call.
``--no-wheels`` leaves the wheels out (a check here, where pydantic is installed).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from spare_gen.data.feed import feed_dataset  # noqa: E402
from spare_gen.data.tables import load_split  # noqa: E402

CALL_LIMIT = 64 * 2**20  # what one device call carries, the working tree included
MARGIN = 2**20
TASKS = {"paper": ("isometric_to_pose", "three_view_to_isometric"),  # paper_scale.py's order within a dataset
         "default_poses": ("isometric_to_pose",)}
SPLITS = ("train", "val", "test")
# the training path's wheels on the device, pinned to this venv's versions: pydantic 2 and what it imports (the config
# schema), matplotlib and what it imports that the device lacks (the training curves and the Figure 6 chart; the
# device has numpy, pillow, packaging and python-dateutil)
WHEELS = ("pydantic", "pydantic_core", "annotated_types", "typing_inspection", "typing_extensions",
          "matplotlib", "contourpy", "cycler", "fonttools", "kiwisolver", "pyparsing")
PIP_PLATFORM = ("--only-binary=:all:", "--python-version", "3.12", "--implementation", "cp",
                *(f"--platform={p}" for p in ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64",
                                              "manylinux2014_x86_64")))


def say(text: str) -> None:
    print(f"prepare_paper_scale: {text}", flush=True)


def repo_bytes() -> int:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    return sum((REPO / f.decode()).stat().st_size for f in files if f and (REPO / f.decode()).is_file())


def pinned(name: str) -> str:
    from importlib.metadata import version

    return f"{name}=={version(name)}"


def download_wheels(dest: Path) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", *PIP_PLATFORM, "-d", str(dest),
                    *(pinned(n) for n in WHEELS)], check=True)
    return sorted(dest.glob("*.whl"))


def export_all(roles: dict[str, Path], staging: Path, size: int | None, preset: int,
               questions: int | None) -> list[tuple[str, Path]]:
    """(role, file) of every exported split, in training order."""
    out = []
    for role, dataset in roles.items():
        for task in TASKS[role]:
            if not all(len(load_split(dataset, task, s, columns=["question_id"])) for s in SPLITS):
                say(f"{role}: {dataset} has no {task} questions in some split: left out")
                continue
            for split in SPLITS:
                path = staging / role / f"{task}-{split}.sgcache.xz"
                if not path.is_file():
                    feed = feed_dataset(dataset, task, split, size=size, questions=questions)
                    feed.export(path, name=dataset.name, preset=preset)
                say(f"{role}/{task}/{split}: {path.stat().st_size / 2**20:.2f} MiB")
                out.append((role, path))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paper", required=True, help="the dataset on the paper's poses (both tasks)")
    parser.add_argument("--default-poses", default=None, help="the Isometric-to-Pose dataset on poses 1-4")
    parser.add_argument("--dest", default="outputs/gpu", help="where call1/, call2/, ... go (git-ignored)")
    parser.add_argument("--size", type=int, default=None, help="image side (default: the drawings' own)")
    parser.add_argument("--xz-preset", type=int, default=9)
    parser.add_argument("--questions", type=int, default=None, help="only each split's first N (a check)")
    parser.add_argument("--no-wheels", action="store_true", help="carry no wheels (a check here)")
    args = parser.parse_args()

    dest = Path(args.dest)
    roles = {"paper": Path(args.paper)}
    if args.default_poses:
        roles["default_poses"] = Path(args.default_poses)
    for role, folder in roles.items():
        if not (folder / "questions").is_dir():
            print(f"prepare_paper_scale.py: --{role.replace('_', '-')} {folder}: no dataset there", file=sys.stderr)
            return 2
    wheels = [] if args.no_wheels else download_wheels(dest / "wheels")
    files = export_all(roles, dest / "staging", args.size, args.xz_preset, args.questions)
    fixed = repo_bytes() + sum(w.stat().st_size for w in wheels) + MARGIN
    room = CALL_LIMIT - fixed
    calls: list[list[tuple[str, Path]]] = [[]]
    for role, path in files:
        size = path.stat().st_size
        if size > room:
            print(f"prepare_paper_scale.py: {path} is {size / 2**20:.1f} MiB, more than a call's "
                  f"{room / 2**20:.1f} MiB room: export it smaller (--size) or split the run", file=sys.stderr)
            return 2
        if sum(p.stat().st_size for _, p in calls[-1]) + size > room:
            calls.append([])
        calls[-1].append((role, path))
    for old in dest.glob("call*"):
        shutil.rmtree(old)
    lines = []
    for n, members in enumerate(calls, start=1):
        folder = dest / f"call{n}"
        for role, path in members:
            (folder / "caches" / role).mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, folder / "caches" / role / path.name)
        for wheel in wheels:
            (folder / "whl").mkdir(parents=True, exist_ok=True)
            shutil.copy2(wheel, folder / "whl" / wheel.name)
        total = fixed - MARGIN + sum(p.stat().st_size for _, p in members)
        lines.append(f"call {n}: carry [\"{folder}\"], {total / 2**20:.1f} MiB with the repository "
                     f"({', '.join(f'{r}/{p.name}' for r, p in members)}); command: "
                     f"bash benchmarks/gpu/paper_scale.sh {folder} 540")
    (dest / "plan.txt").write_text("\n".join(lines) + "\n")
    for line in lines:
        say(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
