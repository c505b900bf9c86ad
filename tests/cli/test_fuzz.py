"""Property-based fuzzing of every file and string the command line reads.

The property: whatever the input, the command exits 0, 1 or 2, never raises (no
traceback), says what is wrong in one line when it refuses, and changes no file
that existed before unless changing it is the command's purpose.

The example count is modest so the suite stays fast; set
``AGENTPROC_FUZZ_EXAMPLES`` (e.g. 2000) for a longer run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentproc.cli import main
from agentproc.labelling.text_parse import parse_text

EXAMPLES = int(os.environ.get("AGENTPROC_FUZZ_EXAMPLES", "25"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 100,  # CI runs the same examples every time
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
PINNED = Path(__file__).resolve().parents[2] / "scenarios" / "pinned"
SCENARIO = PINNED / "n5-L3-r1_10-mixed-decimal-0000.json"
SIM = ["--agent", "sim:oracle"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["S1", "S3", "step_1", "submit_answer", "faithful", "tools", "text", ""])
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)


@st.composite
def mutated(draw: st.DrawFn, obj: Any) -> Any:
    """``obj`` with one to three of its fields replaced, removed or added."""
    obj = json.loads(json.dumps(obj))
    for _ in range(draw(st.integers(1, 3))):
        path: list[Any] = []
        node = obj
        while isinstance(node, dict | list) and node and draw(st.booleans()):
            key = draw(st.sampled_from(list(node) if isinstance(node, dict) else range(len(node))))
            path.append(key)
            node = node[key]
        if not path:
            if isinstance(obj, dict):
                obj[draw(st.text(max_size=8))] = draw(values)
            continue
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "remove"]))
        if action == "remove" and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(values)
    return obj


def text_of_json(draw: st.DrawFn, obj: Any) -> str:
    """JSON text of ``obj``, sometimes cut short or with a stray byte."""
    text = json.dumps(obj)
    how = draw(st.sampled_from(["whole", "whole", "cut", "junk"]))
    if how == "cut":
        return text[: draw(st.integers(0, len(text)))]
    if how == "junk":
        at = draw(st.integers(0, len(text)))
        return text[:at] + draw(st.sampled_from(["}", "\x00", ",", "NaN", "\\ud83d"])) + text[at:]
    return text


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("fuzzbase")
    suite, run = root / "suite", root / "run.jsonl"
    assert main(["generate", "--steps", "3", "--count", "2", "--out", str(suite)]) == 0
    assert main(["run", str(suite), *SIM, "--out", str(run)]) == 0
    return {
        "suite": suite,
        "manifest": json.loads((suite / "suite.json").read_text()),
        "procedure": json.loads((suite / "procedures.jsonl").read_text().splitlines()[0]),
        "record": json.loads(run.read_text().splitlines()[0]),
        "scenario": json.loads(SCENARIO.read_text()),
    }


@contextmanager
def workspace() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="agentproc-fuzz-") as tmp:
        yield Path(tmp)


def holds_the_promise(capsys: pytest.CaptureFixture[str], root: Path, argv: list[Any],
                      may_change: tuple[str, ...] = ()) -> int:  # fmt: skip
    """Run one command; check the exit status, the message and the files around it."""
    before = {k: v for k, v in snapshot(root).items() if k not in may_change}
    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code in (0, 1, 2), err
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("agentproc"), err
    after = {k: v for k, v in snapshot(root).items() if k in before}
    assert after == before
    return code


def write_suite(root: Path, base: dict[str, Any], manifest: Any, lines: list[str]) -> Path:
    suite = root / "suite"
    shutil.copytree(base["suite"], suite)
    (suite / "suite.json").write_text(json.dumps(manifest) if not isinstance(manifest, str)
                                      else manifest)  # fmt: skip
    (suite / "procedures.jsonl").write_text("\n".join(lines) + "\n", errors="surrogatepass")
    return suite


@FUZZ
@given(data=st.data())
def test_any_suite_file(capsys, base, data):
    manifest = data.draw(mutated(base["manifest"]))
    with workspace() as root:
        suite = write_suite(root, base, manifest, [json.dumps(base["procedure"])])
        holds_the_promise(capsys, root, ["run", suite, *SIM, "--out", root / "r.jsonl"],
                          may_change=("r.jsonl",))  # fmt: skip


@FUZZ
@given(data=st.data())
def test_any_procedures_line(capsys, base, data):
    manifest = {k: v for k, v in base["manifest"].items() if k != "sha256"}
    line = text_of_json(data.draw, data.draw(mutated(base["procedure"])))
    with workspace() as root:
        suite = write_suite(root, base, manifest, [line])
        holds_the_promise(capsys, root, ["run", suite, *SIM, "--out", root / "r.jsonl"],
                          may_change=("r.jsonl",))  # fmt: skip


@FUZZ
@given(data=st.data())
def test_any_scenario_file(capsys, base, data):
    text = text_of_json(data.draw, data.draw(mutated(base["scenario"])))
    with workspace() as root:
        scenario = root / "s.json"
        scenario.write_text(text, errors="surrogatepass")
        holds_the_promise(capsys, root, ["run", scenario, *SIM, "--out", root / "r.jsonl"],
                          may_change=("r.jsonl",))  # fmt: skip


def _call(name: Any, arguments: Any, call_id: Any = "c0") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


messages = st.lists(
    st.one_of(
        values,
        st.fixed_dictionaries(
            {
                "role": st.sampled_from(["assistant", "tool", "user", "system", 5]),
                "content": st.none() | st.text(max_size=20) | values,
                "tool_calls": st.none()
                | values
                | st.lists(
                    st.builds(
                        _call,
                        st.sampled_from(["step_1", "step_2", "submit_answer", "nope"]) | values,
                        st.text(max_size=30) | values,
                        st.text(max_size=4) | values,
                    ),
                    max_size=3,
                ),
                "tool_call_id": st.text(max_size=4) | values,
            }
        ),
    ),
    max_size=6,
)


@FUZZ
@given(data=st.data())
def test_any_message_list(capsys, data):
    listed = data.draw(messages)
    text = text_of_json(data.draw, listed)
    with workspace() as root:
        path = root / "m.json"
        path.write_text(text, errors="surrogatepass")
        holds_the_promise(capsys, root, ["replay", "--scenario", SCENARIO, "--messages", path])


@FUZZ
@given(arguments=st.text(max_size=60) | st.binary(max_size=40).map(lambda b: b.decode("latin-1")))
def test_any_tool_call_argument_string(capsys, arguments):
    listed = [{"role": "assistant", "content": None, "tool_calls": [_call("step_1", arguments)]}]
    with workspace() as root:
        path = root / "m.json"
        path.write_text(json.dumps(listed))
        code = holds_the_promise(capsys, root, ["replay", "--scenario", SCENARIO, "--messages",
                                                path, "--json"])  # fmt: skip
        assert code in (0, 1)  # an agent's arguments are data: always judged, never refused


@FUZZ
@given(data=st.data(), command=st.sampled_from(["report", "replay", "relabel"]))
def test_any_run_file_line(capsys, base, data, command):
    line = text_of_json(data.draw, data.draw(mutated(base["record"])))
    with workspace() as root:
        run = root / "run.jsonl"
        run.write_text(json.dumps(base["record"]) + "\n" + line + "\n", errors="surrogatepass")
        holds_the_promise(capsys, root, [command, run])


@FUZZ
@given(reply=st.text(max_size=200))
def test_any_text_mode_reply(capsys, base, reply):
    record = {**base["record"], "mode": "text", "output": reply, "calls": [], "labels": []}
    with workspace() as root:
        run = root / "run.jsonl"
        run.write_text(json.dumps(record) + "\n")
        holds_the_promise(capsys, root, ["relabel", run])
        for answer_variable in ("S5", "S3"):
            parse_text(reply, answer_variable)  # never raises
