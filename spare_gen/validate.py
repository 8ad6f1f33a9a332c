"""``spare-gen validate <out>``: every table and file the dataset lists, then every question-set rule.

dataset.json's own record (config, seed, versions, citation, table hashes) is checked against the provenance
hash it stores (an edited seed is caught); tables are checked against the SHA-256 values dataset.json recorded
when the run finished (an edit to views.parquet is caught), and every file any table names must exist with the hash that table records
(a deleted drawing no question uses is caught too). Every other file the run wrote (the card, preview sheets, pool
pictures, reports/audit.json) must match the hash dataset.json records for it (``files``); every file the ownership
ledger records (what later commands wrote too: baselines, quiz plans, pages) must hold the bytes it records, and
the ledger itself must match the digest dataset.json records for it. Every other entry of the folder, dot files,
``.units/`` and ``timings/`` included, is listed as not spare_gen's (kept; exit 1); a FIFO, socket or device is
listed and never opened. People's data by design (raters' answers, ``inventory.PEOPLES_DATA``) is listed in a note.
Question rules: ``spare_gen.stages.questions.validate``.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

from spare_gen.store import inventory, ownership
from spare_gen.store.manifest import LEDGER_KEY, PROVENANCE_KEY, ledger_digest, provenance_hash, read_manifest
from spare_gen.stages.questions import validate as questions_validate
from spare_gen.stages.questions.schema import QUESTIONS_DIR, SUMMARY_NAME


def _say(message: str, progress: bool) -> None:
    if progress:
        print(f"spare-gen validate: {message}", file=sys.stderr, flush=True)


def validate(out: str | Path, progress: bool = False) -> list[str]:
    """Every problem found in the dataset at ``out`` (empty: valid); ``progress``: say each phase on stderr."""
    out = Path(out)
    if not out.is_dir():
        return [f"load: {out} is not a folder"]
    manifest = read_manifest(out)
    if not manifest:
        return [f"load: {out / inventory.MANIFEST_FILE} is missing or unreadable (not a spare_gen dataset?)"]
    if not manifest.get("complete"):
        return [f"load: the run that wrote {out} did not finish (dataset.json says complete: false); rerun it"]
    problems = []
    if manifest.get(PROVENANCE_KEY) != provenance_hash(manifest):
        problems.append(f"files: {inventory.MANIFEST_FILE} was edited since the run wrote it: its config, seed, "
                        f"versions or citation no longer match the {PROVENANCE_KEY} it records")
    if manifest.get(LEDGER_KEY) is None:
        problems.append(f"files: {inventory.MANIFEST_FILE} records no digest of {ownership.LEDGER} (what spare_gen "
                        "wrote): written by an older spare_gen; rerun the same command to record it")
    elif manifest[LEDGER_KEY] != ledger_digest(out):
        problems.append(f"files: {ownership.LEDGER} was edited since spare_gen wrote it: it no longer matches the "
                        f"{LEDGER_KEY} that {inventory.MANIFEST_FILE} records")
    if "files" not in manifest:
        problems.append(f"files: {inventory.MANIFEST_FILE} records no hashes of the files no table hashes (the card, "
                        "previews, pool pictures): written by an older spare_gen; rerun the same command to record them")
    _say(f"checking {len(manifest.get('tables', {}))} tables and the hash of every file they name ...", progress)
    try:
        problems += inventory.check(out, manifest.get("tables", {}), show=progress, files=manifest.get("files", {}))
    except (OSError, ValueError) as exc:
        return [f"files: cannot read the tables of {out}: {type(exc).__name__}: {exc}"]
    special = [rel for rel, st in ownership.walk(out / QUESTIONS_DIR) if not stat.S_ISREG(st.st_mode)
               and not stat.S_ISLNK(st.st_mode)]
    if special:  # a FIFO or device where a question file may be read: the rules would open it
        problems.append(f"questions: rules not checked: {QUESTIONS_DIR}/{special[0]} is not a regular file")
    elif (out / QUESTIONS_DIR / SUMMARY_NAME).is_file():
        _say("checking every question-set rule ...", progress)
        problems += questions_validate.validate(out)
    return problems


def main(out: Path) -> int:
    """Print each problem; exit code 1 if any, else 0 with a one-line OK; a folder that is no dataset at all (no
    dataset.json) is bad input: one line, exit code 2 (``FileNotFoundError``, as the command line reports it)."""
    if Path(out).is_dir() and not (Path(out) / inventory.MANIFEST_FILE).exists():
        raise FileNotFoundError(f"{out} is not a spare_gen dataset: it has no {inventory.MANIFEST_FILE} "
                                f"(`spare-gen run --out {out}` writes one)")
    problems = validate(out, progress=True)
    for p in problems:
        print(p)
    people = inventory.peoples_data(Path(out)) if Path(out).is_dir() else []
    for rel in people:  # raters' answers: people's data by design, not spare_gen's, never a problem
        print(f"note: {rel} is people's data (raters' answers), not spare_gen's: kept, not checked")
    if problems:
        print(f"spare-gen validate: {len(problems)} problem(s) in {out}", file=sys.stderr)
        return 1
    manifest = read_manifest(Path(out))
    n_files = len(set(inventory.referenced_files(Path(out))) | set(manifest.get("files", {})))
    print(f"OK: {out}: {len(manifest['tables'])} tables and {n_files} files as recorded; all rules hold")
    return 0
