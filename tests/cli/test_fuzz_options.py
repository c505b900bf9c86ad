"""Property-based fuzzing of the newer inputs: variant files (TOML and JSON), and the
options of ``compare``, ``stress``, ``relabel`` and ``report``'s exports.

The property, stricter than :mod:`tests.cli.test_fuzz`'s: whatever the input, no
traceback; a refusal (exit 2) is one line and leaves every file as it was and no new
one; a success changes only the outputs it names. ``AGENTPROC_FUZZ_EXAMPLES`` sets
the example count, as there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentproc.cli import main
from tests.cli.test_fuzz import FUZZ, SCENARIO, SIM, mutated, text_of_json

VARIANTS = Path(__file__).resolve().parents[2] / "scenarios" / "variants"


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): os.readlink(p)
        if p.is_symlink()
        else hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_symlink() or p.is_file()
    }


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("fuzzoptions")
    suite, run = root / "suite", root / "run.jsonl"
    assert main(["generate", "--steps", "3", "--count", "2", "--out", str(suite)]) == 0
    assert main(["run", str(suite), *SIM, "--out", str(run)]) == 0
    return {"suite": suite, "run": run}


@contextmanager
def workspace(base: dict[str, Any]) -> Iterator[Path]:
    """A folder holding a copy of the suite and the run, a file, a FIFO and a symlink."""
    with tempfile.TemporaryDirectory(prefix="agentproc-fuzz-") as tmp:
        root = Path(tmp)
        shutil.copytree(base["suite"], root / "suite")
        shutil.copy(base["run"], root / "run.jsonl")
        (root / "file").write_text("keep")
        os.mkfifo(root / "fifo")
        (root / "link.jsonl").symlink_to(root / "run.jsonl")
        os.link(root / "run.jsonl", root / "hard.jsonl")
        (root / "folder").mkdir()
        (root / "folder" / "episodes.csv").write_text("keep")
        yield root


TARGETS = ["new.out", "new/deeper/x.out", "file", "file/x", "fifo", "link.jsonl", "hard.jsonl",
           "run.jsonl", "suite/procedures.jsonl", "suite", "folder", "/dev/null"]  # fmt: skip
"""Where an output may be sent, relative to the workspace (``/dev/null``: a device)."""
targets = st.sampled_from(TARGETS)


def keeps_the_promise(capsys, root: Path, argv: list[Any], outputs: tuple[str, ...]) -> int:
    """Run one command; check the exit status, the message and every file around it."""
    fifo = os.stat(root / "fifo").st_ino
    before = snapshot(root)
    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code in (0, 1, 2, 3), err
    assert "Traceback" not in err
    after = snapshot(root)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("agentproc"), err
        assert after == before  # nothing changed, nothing added
    else:
        mine = tuple(str(Path(o)) for o in outputs)
        kept = {k: v for k, v in before.items() if not k.startswith(mine)}
        assert {k: after.get(k) for k in kept} == kept, err
    assert os.stat(root / "fifo").st_ino == fifo  # never replaced
    return code


def where(root: Path, target: str) -> Path:
    return Path(target) if target.startswith("/") else root / target


@FUZZ
@given(data=st.data(), kind=st.sampled_from(["json", "toml"]))
def test_any_variant_file(capsys, base, data, kind):
    shipped = (
        VARIANTS / data.draw(st.sampled_from(sorted(p.name for p in VARIANTS.iterdir())))
    ).read_text()
    if kind == "toml":
        text = data.draw(st.sampled_from(["cut", "junk", "deep", "whole"]))
        depth = data.draw(st.integers(1, 50_000))
        text = {
            "cut": shipped[: data.draw(st.integers(0, len(shipped)))],
            "junk": shipped
            + data.draw(st.sampled_from(["\nx = [", "\n[prompt]\nuser = 1", "\x00"])),
            "deep": "x = " + "[" * depth + "]" * depth,
            "whole": shipped,
        }[text]
    else:
        spec = {"name": "v", "rendering": "prose", "prompt": {"user": "{procedure}"}}
        text = text_of_json(data.draw, data.draw(mutated(spec)))
    with workspace(base) as root:
        (root / f"v.{kind}").write_text(text, errors="surrogatepass")
        keeps_the_promise(capsys, root, ["run", SCENARIO, *SIM, "--variant", root / f"v.{kind}",
                                          "--out", root / "r.jsonl"], ("r.jsonl",))  # fmt: skip


variant_lists = st.sampled_from(["", ",", "default", "default,default", "default,prose",
                                 "prose,nope", "../x", "default,file", "prose"])  # fmt: skip


@FUZZ
@given(data=st.data(), command=st.sampled_from(["compare", "stress"]))
def test_any_compare_or_stress_options(capsys, base, data, command):
    with workspace(base) as root:
        out = data.draw(targets)
        argv: list[Any] = [command, root / "suite", *SIM, "--out", where(root, out)]
        argv += ["--variants", data.draw(variant_lists)]
        for flag in data.draw(
            st.lists(st.sampled_from(["--overwrite", "--resume", "--json"]), max_size=2)
        ):
            argv.append(flag)
        for option, value in data.draw(st.lists(st.tuples(
            st.sampled_from(["--trials", "--limit", "--baseline", "--threshold", "--seed"]),
            st.sampled_from(["0", "-1", "1", "2", "x", "nan", "prose", ""]),
        ), max_size=2)):  # fmt: skip
            if command == "compare" and option == "--threshold":
                continue
            argv += [option, value]
        keeps_the_promise(capsys, root, argv, (out,))


@FUZZ
@given(out=targets, overwrite=st.booleans(), suite=st.sampled_from([None, "suite", "file", "nope"]))
def test_any_relabel_options(capsys, base, out, overwrite, suite):
    with workspace(base) as root:
        argv: list[Any] = ["relabel", root / "run.jsonl", "--out", where(root, out)]
        argv += ["--overwrite"] * overwrite + (["--suite", root / suite] if suite else [])
        keeps_the_promise(capsys, root, argv, (out,))


@FUZZ
@given(data=st.data())
def test_any_report_export_options(capsys, base, data):
    with workspace(base) as root:
        argv: list[Any] = ["report", root / "run.jsonl"]
        outputs = []
        for option in data.draw(
            st.lists(
                st.sampled_from(["--html", "--csv", "--parquet"]),
                min_size=1,
                max_size=3,
                unique=True,
            )
        ):
            target = data.draw(targets)
            outputs.append(target)
            argv += [option, where(root, target)]
        if data.draw(st.booleans()):
            argv.append("--overwrite")
        argv += ["--by", data.draw(st.sampled_from(["length", "", "nope", "length,mode"]))]
        keeps_the_promise(capsys, root, argv, tuple(outputs))
