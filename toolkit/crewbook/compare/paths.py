"""Compare what two paths hold (`diff`), or a path with its version at a git revision.

`input_kind` tells what a command-line argument names:

* a folder holding ``schema.yaml``, or a YAML file with ``artifacts:`` → ``schema``;
* a ``.toml`` file → ``pipeline``;
* a YAML file in the profile format (``matrix``, ``roles``, ``task_defaults``,
  ``family``) or a preset (``setting``), or a family name such as ``claude`` → ``profile``;
* ``LEDGER:RUN`` (a ledger file or folder, a colon, a run id), a ``.jsonl`` /
  ``.parquet`` file, a folder of ledgers or a spec-kit run folder → ``run`` (without
  ``:RUN`` the ledger must hold a single run).

`diff_at_revision(rev, path)` reads the version of `path` at git revision `rev` with
``git ls-tree`` and ``git show`` into a temporary folder (a schema's whole folder, a
pipeline's folder with its prompts and kinds config) and compares it with the working
copy. Nothing in the working tree or the index changes.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from ..errors import CompareError, NotFoundError
from .result import Diff

Kind = Literal["schema", "pipeline", "profile", "run"]
PROFILE_KEYS = frozenset({"family", "matrix", "roles", "task_defaults"})
#: Most files `diff_at_revision` reads from one revision.
MAX_FILES = 5000
GIT_TIMEOUT = 60


@dataclass(frozen=True)
class InputKind:
    """What one argument names: its kind, the path (None for a family name), the run."""

    kind: Kind
    path: Path | None
    run: str | None = None
    family: str | None = None

    @property
    def source(self) -> Any:
        """What the matching `diff_*` function takes for this side."""
        if self.family is not None:
            return self.family
        return self.path


def _yaml_keys(path: Path) -> set[str]:
    from ..sources import read_yaml

    doc = read_yaml(path, error_cls=CompareError, display_path=str(path),
                    require_mapping=False)
    return {str(k) for k in doc.data} if isinstance(doc.data, dict) else set()


def _is_ledger_folder(path: Path) -> bool:
    from ..ledger.speckit import find_speckit_runs

    return bool(find_speckit_runs(path)) or any(path.rglob("*.jsonl"))


def input_kind(text: str | Path) -> InputKind:
    """What `text` names; `NotFoundError` when nothing is there, `CompareError` when
    crewbook cannot compare what it holds."""
    raw = str(text)
    path = Path(raw)
    if not path.exists():
        head, sep, run = raw.rpartition(":")
        if sep and head and Path(head).exists():
            return InputKind("run", Path(head), run or None)
        if not sep and "/" not in raw and path.suffix == "":
            from ..routing.presets import provider_presets_list

            families = [p.family for p in provider_presets_list()]
            if raw in families:
                return InputKind("profile", None, family=raw)
        raise NotFoundError(
            f"{raw}: no such file or folder; give two schema folders, two pipeline .toml "
            "files, two routing profiles (or family names), or two runs as LEDGER:RUN")
    if path.is_dir():
        if (path / "schema.yaml").is_file():
            return InputKind("schema", path)
        if _is_ledger_folder(path):
            return InputKind("run", path)
        raise CompareError(
            f"cannot tell what the folder {raw} holds: a schema folder holds schema.yaml, a "
            "ledger folder .jsonl files or spec-kit runs")
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return InputKind("pipeline", path)
    if suffix in (".jsonl", ".parquet"):
        return InputKind("run", path)
    if suffix in (".yaml", ".yml"):
        if path.name == "schema.yaml":
            return InputKind("schema", path)
        keys = _yaml_keys(path)
        if "artifacts" in keys:
            return InputKind("schema", path)
        if "setting" in keys or (keys and keys <= PROFILE_KEYS):
            return InputKind("profile", path)
        raise CompareError(
            f"cannot tell what {raw} holds: its keys ({', '.join(sorted(keys)) or 'none'}) "
            "are neither a schema's (artifacts, apply) nor a routing profile's "
            f"({', '.join(sorted(PROFILE_KEYS))})")
    raise CompareError(
        f"cannot compare {raw}: crewbook compares schema folders or schema.yaml, pipeline "
        ".toml files, routing profiles (.yaml) and ledgers (.jsonl, LEDGER:RUN)")


def diff_inputs(a: InputKind, b: InputKind, *, labels: tuple[str, str] | None = None,
                **options: Any) -> Diff:
    """Compare two inputs of the same kind with the matching `diff_*` function."""
    if a.kind != b.kind:
        raise CompareError(
            f"cannot compare a {a.kind} with a {b.kind}: {_name(a)} is a {a.kind}, "
            f"{_name(b)} is a {b.kind}; give two of a kind (two schemas, two pipelines, "
            "two profiles or two runs)")
    if a.kind == "schema":
        from .schemas import diff_schemas

        return diff_schemas(a.source, b.source, labels=labels, **options)
    if a.kind == "pipeline":
        from .pipelines import diff_pipelines

        return diff_pipelines(a.source, b.source, labels=labels)
    if a.kind == "profile":
        from .profiles import diff_profiles

        return diff_profiles(a.source, b.source, labels=labels, **options)
    from .runs import diff_runs

    return diff_runs(a.source, a.run, b.source, b.run, labels=labels)


def _name(item: InputKind) -> str:
    if item.family is not None:
        return item.family
    return f"{item.path}:{item.run}" if item.run else str(item.path)


def diff(a: str | Path, b: str | Path, *, labels: tuple[str, str] | None = None,
         **options: Any) -> Diff:
    """Compare what paths `a` and `b` hold, the kind picked from the files (`input_kind`).

    `options` go to the matching function: `project=` / `changes=` for schemas,
    `change=` / `project=` for profiles.
    """
    return diff_inputs(input_kind(a), input_kind(b), labels=labels, **options)


# -- git -----------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                              timeout=GIT_TIMEOUT, check=False)
    except FileNotFoundError as exc:
        raise NotFoundError("the git program was not found on PATH; install git") from exc
    except subprocess.TimeoutExpired as exc:
        raise CompareError(f"git {' '.join(args)} took longer than {GIT_TIMEOUT} s") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise NotFoundError(f"git {' '.join(args[:2])}: "
                            + (message[-1] if message else f"exit status {done.returncode}"))
    return done.stdout


def repo_root(path: Path) -> Path:
    """The top of the git work tree holding `path`."""
    folder = path if path.is_dir() else path.parent
    return Path(_git(folder, "rev-parse", "--show-toplevel").decode("utf-8").strip())


def _tree(root: Path, rev: str, folder: str) -> list[str]:
    spec = folder.rstrip("/") + "/" if folder not in ("", ".") else "."
    out = _git(root, "ls-tree", "-r", "-z", "--name-only", rev, "--", spec)
    return [name for name in out.decode("utf-8").split("\0") if name]


def checkout_at(rev: str, path: Path, dest: Path) -> Path:
    """Write the version of `path` at `rev` under `dest` (same relative layout) with
    `git ls-tree` and `git show`; return the path of that version under `dest`."""
    path = path.resolve()
    root = repo_root(path).resolve()
    try:
        rel = PurePosixPath(path.relative_to(root).as_posix())
    except ValueError as exc:
        raise CompareError(f"{path} is not inside the git work tree {root}") from exc
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except NotFoundError:
        raise NotFoundError(f"no git revision {rev!r} in {root}") from None
    kind = input_kind(path).kind
    if kind == "run":
        raise CompareError("runs are compared as LEDGER:RUN pairs, not at a git revision")
    if kind == "schema":
        folder = rel if path.is_dir() else rel.parent
    elif kind == "pipeline":
        folder = rel.parent
    else:
        folder = None
    if folder is None:
        names = _tree(root, rev, str(rel.parent))
        names = [n for n in names if n == str(rel)]
    else:
        names = _tree(root, rev, str(folder))
        config = "config.toml" if str(folder) == "." else f"{folder}/config.toml"
        if kind == "pipeline" and config not in names and str(folder) != ".":
            names = _tree(root, rev, str(folder.parent))
    target = str(rel / "schema.yaml") if kind == "schema" and path.is_dir() else str(rel)
    if target not in names:
        raise NotFoundError(f"{rel} did not exist at revision {rev}")
    if len(names) > MAX_FILES:
        raise CompareError(f"{len(names)} files to read at {rev} (more than {MAX_FILES})")
    for name in names:
        out = dest / name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(_git(root, "show", f"{rev}:{name}"))
    return dest / str(rel)


def diff_at_revision(rev: str, path: str | Path, **options: Any) -> Diff:
    """Compare `path` (a schema folder or schema.yaml, a pipeline, a profile) as it was at
    git revision `rev` (before) with the working copy (after). Reads with `git show`;
    changes nothing in the work tree."""
    current = Path(path)
    if not current.exists():
        raise NotFoundError(f"{current}: no such file or folder")
    with tempfile.TemporaryDirectory(prefix="crewbook-git-") as tmp:
        old = checkout_at(rev, current, Path(tmp))
        shown = current.as_posix()
        return diff(old, current, labels=(f"{shown}@{rev}", shown), **options)
