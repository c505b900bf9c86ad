"""A corpus of bad inputs, tried as an adversarial user would.

Each case writes its files, runs one command, and checks the promise the README
makes: exit 2 (1 for a disk that is full) with one line naming the file and the
field, no traceback, and nothing that existed before changed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import cli

from agentproc.cli import main
from agentproc.runs import RunWriter, read_run

DEEP = "[" * 50_000 + "]" * 50_000
HUGE = "9" * 5_000
PINNED = Path(__file__).resolve().parents[2] / "scenarios" / "pinned"
SCENARIO = PINNED / "n5-L3-r1_10-mixed-decimal-0000.json"


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` and a digest of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@dataclass(frozen=True)
class Base:
    """Good inputs the cases spoil: a suite, a run of it, a scenario, a record."""

    suite: Path
    run: Path
    scenario: dict
    record: dict


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Base:
    root = tmp_path_factory.mktemp("base")
    suite, run = root / "suite", root / "run.jsonl"
    assert main(["generate", "--steps", "3", "--count", "2", "--out", str(suite)]) == 0
    assert main(["run", str(suite), "--agent", "sim:oracle", "--out", str(run)]) == 0
    record = json.loads(run.read_text().splitlines()[0])
    return Base(suite, run, json.loads(SCENARIO.read_text()), record)


def copy_suite(base: Base, tmp: Path, procedures: bytes | None = None) -> Path:
    """The base suite, with other procedures and the digest dropped (so they are read)."""
    suite = tmp / "suite"
    shutil.copytree(base.suite, suite)
    if procedures is not None:
        (suite / "procedures.jsonl").write_bytes(procedures)
        manifest = json.loads((suite / "suite.json").read_text())
        manifest.pop("sha256")
        (suite / "suite.json").write_text(json.dumps(manifest))
    return suite


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


def record_with(base: Base, tmp: Path, **fields: object) -> Path:
    rec = {**base.record, **fields}
    for key, value in list(rec.items()):
        if value is None:
            del rec[key]
    return write(tmp / "run.jsonl", json.dumps(rec) + "\n")


def scenario_with(base: Base, tmp: Path, change: Callable[[dict], None]) -> Path:
    data = json.loads(json.dumps(base.scenario))
    change(data)
    return write(tmp / "scenario.json", json.dumps(data))


def metrics_with(base: Base, **changes: object) -> dict:
    return {**base.record["metrics"], **changes}


def first_line(base: Base) -> str:
    return (base.suite / "procedures.jsonl").read_text().splitlines()[0]


def spoil(line: str, **changes: Callable[[list], None]) -> bytes:
    """A procedures line with some of its lists changed in place."""
    data = json.loads(line)
    for key, change in changes.items():
        change(data[key])
    return (json.dumps(data) + "\n").encode()


def tool_call_messages(arguments: object) -> str:
    call = {"id": "c0", "type": "function", "function": {"name": "step_1", "arguments": arguments}}
    return json.dumps([{"role": "assistant", "content": None, "tool_calls": [call]}])


SIM = ("--agent", "sim:oracle")

# (id, argv builder, exit status, what the one line must say)
Case = tuple[str, Callable[[Base, Path], list[object]], int, list[str]]
CASES: list[Case] = [
    # -- presets
    (
        "deep preset",
        lambda b, t: ["generate", "--preset", write(t / "p.json", DEEP), "--out", t / "o"],
        2,
        ["p.json", "nested too deeply"],
    ),
    (
        "huge integer in a preset",
        lambda b, t: [
            "generate",
            "--preset",
            write(t / "p.json", '{"count": ' + HUGE + "}"),
            "--out",
            t / "o",
        ],
        2,
        ["p.json", "4,300 digits"],
    ),
    (
        "NaN in a preset",
        lambda b, t: [
            "generate",
            "--preset",
            write(t / "p.json", '{"blocks": [{"steps": [3], "ranges": [[NaN, 10]]}]}'),
            "--out",
            t / "o",
        ],
        2,
        ["p.json", "NaN"],
    ),
    (
        "preset not UTF-8",
        lambda b, t: ["generate", "--preset", write(t / "p.json", b"\xff{}"), "--out", t / "o"],
        2,
        ["p.json", "not UTF-8"],
    ),
    (
        "preset is a folder",
        lambda b, t: ["generate", "--preset", base_dir(t), "--out", t / "o"],
        2,
        ["folder"],
    ),
    # -- procedures.jsonl
    (
        "deep procedures line",
        lambda b, t: ["run", copy_suite(b, t, DEEP.encode() + b"\n"), *SIM, "--out", t / "r"],
        2,
        ["procedures.jsonl", "line 1", "nested too deeply"],
    ),
    (
        "huge integer in procedures",
        lambda b, t: [
            "run",
            copy_suite(b, t, first_line(b).replace('"seed":', f'"seed":{HUGE},"x":', 1).encode()),
            *SIM,
            "--out",
            t / "r",
        ],
        2,
        ["procedures.jsonl", "line 1", "4,300 digits"],
    ),
    (
        "procedures not UTF-8",
        lambda b, t: ["run", copy_suite(b, t, b'{"id": "\xff"}\n'), *SIM, "--out", t / "r"],
        2,
        ["procedures.jsonl", "line 1", "not UTF-8"],
    ),
    (
        "procedures.jsonl is a folder",
        lambda b, t: ["run", suite_with_folder(b, t), *SIM, "--out", t / "r"],
        2,
        ["procedures.jsonl", "folder"],
    ),
    (
        "a step value its operation does not give",
        lambda b, t: [
            "run",
            copy_suite(b, t, spoil(first_line(b), steps=lambda st: st[1].__setitem__(3, 7))),
            *SIM,
            "--out",
            t / "r",
        ],
        2,
        ["procedures.jsonl", "line 1: steps[1]", "step 2: S4 = 0.007 is not"],
    ),
    (
        "an input outside its cell's range",
        lambda b, t: [
            "run",
            copy_suite(b, t, spoil(first_line(b), inputs=lambda x: x.__setitem__(0, 99999))),
            *SIM,
            "--out",
            t / "r",
        ],
        2,
        ["procedures.jsonl", "line 1: inputs", "S1 = 99.999 is outside the range"],
    ),
    # -- scenario files
    (
        "scenarios .jsonl not UTF-8",
        lambda b, t: ["run", write(t / "s.jsonl", b"\xfe\xff\n"), *SIM, "--out", t / "r"],
        2,
        ["s.jsonl", "line 1", "not UTF-8"],
    ),
    (
        "deep scenario",
        lambda b, t: ["run", write(t / "s.json", DEEP), *SIM, "--out", t / "r"],
        2,
        ["s.json", "nested too deeply"],
    ),
    (
        "scenario without steps",
        lambda b, t: [
            "run",
            scenario_with(b, t, lambda d: d.update(steps=[])),
            *SIM,
            "--out",
            t / "r",
        ],
        2,
        ["scenario.json", "steps", "at least one step"],
    ),
    (
        "scenario operand Sx",
        lambda b, t: [
            "run",
            scenario_with(b, t, lambda d: d["steps"][1]["operands"].__setitem__(0, "Sx")),
            *SIM,
            "--out",
            t / "r",
        ],
        2,
        ["scenario.json", "steps[1].operands[0]", "'Sx'"],
    ),
    (
        "scenario reading a later step",
        lambda b, t: [
            "run",
            scenario_with(b, t, lambda d: d["steps"][0]["operands"].__setitem__(1, "S9")),
            *SIM,
            "--out",
            t / "r",
        ],
        2,
        ["steps[0].operands[1]", "'S9'"],
    ),
    (
        "scenario field name with line breaks",
        lambda b, t: [
            "run",
            scenario_with(b, t, lambda d: d.update({"a\nb\u2028c": 1})),
            *SIM,
            "--out",
            t / "r",
        ],
        2,
        ["scenario.json", "a\\nb\\u2028c", "Extra inputs"],
    ),
    # -- message files
    (
        "deep messages",
        lambda b, t: ["replay", "--scenario", SCENARIO, "--messages", write(t / "m.json", DEEP)],
        2,
        ["m.json", "nested too deeply"],
    ),
    (
        "huge integer in messages",
        lambda b, t: [
            "replay",
            "--scenario",
            SCENARIO,
            "--messages",
            write(t / "m.json", '[{"role": "user", "content": "x", "n": ' + HUGE + "}]"),
        ],
        2,
        ["m.json", "4,300 digits"],
    ),
    (
        "tool_calls is a number",
        lambda b, t: [
            "replay",
            "--scenario",
            SCENARIO,
            "--messages",
            write(t / "m.json", '[{"role": "assistant", "content": null, "tool_calls": 5}]'),
        ],
        2,
        ["m.json", "messages[0].tool_calls"],
    ),
    (
        "messages not a list",
        lambda b, t: [
            "replay",
            "--scenario",
            SCENARIO,
            "--messages",
            write(t / "m.json", '"hello"'),
        ],
        2,
        ["m.json", "messages"],
    ),
    # -- run files
    (
        "deep run-file line (report)",
        lambda b, t: ["report", write(t / "r.jsonl", DEEP + "\n")],
        2,
        ["r.jsonl", "line 1", "nested too deeply"],
    ),
    (
        "deep run-file line (replay)",
        lambda b, t: ["replay", write(t / "r.jsonl", DEEP + "\n")],
        2,
        ["r.jsonl", "line 1"],
    ),
    (
        "huge integer in a run file",
        lambda b, t: ["report", write(t / "r.jsonl", '{"scenario_id": ' + HUGE + "}\n")],
        2,
        ["r.jsonl", "line 1", "4,300 digits"],
    ),
    (
        "metrics is a number",
        lambda b, t: ["report", record_with(b, t, metrics=5)],
        2,
        ["run.jsonl", "line 1", "metrics", "an object"],
    ),
    (
        "metrics without progress_rate",
        lambda b, t: [
            "report",
            record_with(
                b, t, metrics={k: v for k, v in b.record["metrics"].items() if k != "progress_rate"}
            ),
        ],
        2,
        ["metrics.progress_rate", "missing"],
    ),
    (
        "first_answer_correct a string",
        lambda b, t: [
            "report",
            record_with(b, t, metrics={**b.record["metrics"], "first_answer_correct": "y"}),
        ],
        2,
        ["metrics.first_answer_correct"],
    ),
    (
        "params is a list",
        lambda b, t: ["report", record_with(b, t, params=[1])],
        2,
        ["params", "an object"],
    ),
    (
        "params.steps a string",
        lambda b, t: ["report", record_with(b, t, params={**b.record["params"], "steps": "x"})],
        2,
        ["params.steps", "a whole number"],
    ),
    (
        "params missing",
        lambda b, t: ["report", record_with(b, t, params=None)],
        2,
        ["params", "missing"],
    ),
    (
        "trial negative",
        lambda b, t: ["report", record_with(b, t, trial=-1)],
        2,
        ["trial"],
    ),
    (
        "resume with a list scenario_id",
        lambda b, t: [
            "run",
            b.suite,
            *SIM,
            "--resume",
            "--out",
            record_with(b, t, scenario_id=["a"]),
        ],
        2,
        ["run.jsonl", "line 1", "scenario_id", "a string"],
    ),
    (
        "run file is a folder (report)",
        lambda b, t: ["report", base_dir(t)],
        2,
        ["folder"],
    ),
    (
        "relabel of a record whose labels are not a list",
        lambda b, t: ["relabel", record_with(b, t, labels="x")],
        2,
        ["run.jsonl", "line 1"],
    ),
    # -- round 3: values in range, fields named
    (
        "a longest correct prefix beyond the procedure (report)",
        lambda b, t: [
            "report",
            record_with(b, t, metrics=metrics_with(b, longest_correct_prefix=10**6)),
        ],
        2,
        ["run.jsonl", "line 1: metrics.longest_correct_prefix", "1000000"],
    ),
    (
        "a longest correct prefix beyond the procedure (replay)",
        lambda b, t: [
            "replay",
            record_with(b, t, metrics=metrics_with(b, longest_correct_prefix=10**6)),
        ],
        2,
        ["run.jsonl", "line 1: metrics.longest_correct_prefix"],
    ),
    (
        "a progress rate above 1",
        lambda b, t: ["report", record_with(b, t, metrics=metrics_with(b, progress_rate=2.5))],
        2,
        ["run.jsonl", "line 1: metrics.progress_rate", "2.5"],
    ),
    (
        "a scenario whose tools are not function tools",
        lambda b, t: [
            "run",
            scenario_with(b, t, lambda d: d.__setitem__("tools", [{"x": 1}])),
            *SIM,
            "--out",
            t / "r",
        ],
        2,
        ["scenario.json", "tools", "tools[0]", "function tool"],
    ),
    (
        "a procedure index below 0",
        lambda b, t: [
            "run",
            copy_suite(
                b, t, (json.dumps({**json.loads(first_line(b)), "index": -1}) + "\n").encode()
            ),
            *SIM,
            "--out",
            t / "r",
        ],
        2,
        ["procedures.jsonl", "line 1", "index"],
    ),
    (
        "an empty procedures.jsonl",
        lambda b, t: ["run", copy_suite(b, t, b""), *SIM, "--out", t / "r"],
        2,
        ["procedures.jsonl", "holds no scenario"],
    ),
    (
        "a preset whose range runs backwards",
        lambda b, t: [
            "generate",
            "--preset",
            write(t / "p.json", '{"blocks": [{"steps": [3], "ranges": [[5, 1]]}]}'),
            "--out",
            t / "o",
        ],
        2,
        ["p.json", "ranges", "range low 5.0 is above high 1.0"],
    ),
    (
        "a bad line far into a scenarios file",
        lambda b, t: [
            "run",
            write(t / "s.jsonl", (json.dumps(b.scenario) + "\n") * 3 + '{"id": 1}\n'),
            *SIM,
            "--out",
            t / "r",
        ],
        2,
        ["s.jsonl", "line 4"],
    ),
    # -- where output goes
    (
        "generate --out is a file",
        lambda b, t: ["generate", "--steps", "3", "--count", "1", "--out", write(t / "f", "keep")],
        2,
        ["f", "not a folder"],
    ),
    (
        "generate --out under a file",
        lambda b, t: [
            "generate",
            "--steps",
            "3",
            "--count",
            "1",
            "--out",
            write(t / "f", "keep") / "s",
        ],
        2,
        ["f/s", "a part of the path is a file"],
    ),
    (
        "generate --overwrite into a folder that is not a suite",
        lambda b, t: [
            "generate",
            "--steps",
            "3",
            "--count",
            "1",
            "--overwrite",
            "--out",
            base_dir(t),
        ],
        2,
        ["holds 'notes.txt'", "not a suite folder"],
    ),
    (
        "run --out under a file",
        lambda b, t: ["run", b.suite, *SIM, "--out", write(t / "f", "keep") / "r.jsonl"],
        2,
        ["f/r.jsonl", "a part of the path is a file"],
    ),
    (
        "run --out is a folder, --overwrite",
        lambda b, t: ["run", b.suite, *SIM, "--overwrite", "--out", base_dir(t)],
        2,
        ["folder"],
    ),
    (
        "run --out is a folder, --resume",
        lambda b, t: ["run", b.suite, *SIM, "--resume", "--out", base_dir(t)],
        2,
        ["folder"],
    ),
    (
        "relabel --out is a folder",
        lambda b, t: ["relabel", b.run, "--overwrite", "--out", base_dir(t)],
        2,
        ["folder"],
    ),
    (
        "run --out is a device",
        lambda b, t: ["run", b.suite, *SIM, "--overwrite", "--out", "/dev/full"],
        2,
        ["/dev/full", "--out", "special file"],
    ),
]


def base_dir(tmp: Path) -> Path:
    """A folder holding something that is not agentproc's."""
    folder = tmp / "folder"
    folder.mkdir(exist_ok=True)
    (folder / "notes.txt").write_text("keep me")
    return folder


def suite_with_folder(base: Base, tmp: Path) -> Path:
    suite = copy_suite(base, tmp)
    (suite / "procedures.jsonl").unlink()
    (suite / "procedures.jsonl").mkdir()
    return suite


@pytest.mark.parametrize(
    ("argv", "code", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_one_line_naming_it_and_changes_nothing(
    capsys, tmp_path: Path, base: Base, argv, code: int, says: list[str]
):
    args = argv(base, tmp_path)
    before = snapshot(tmp_path)
    got, _, err = cli(capsys, *args)
    lines = err.strip().splitlines()
    assert got == code, err
    assert len(lines) == 1 and lines[0].startswith("agentproc"), err
    for part in says:
        assert part in lines[0]
    assert snapshot(tmp_path) == before  # nothing that was there changed, nothing added
    assert not list(tmp_path.glob(".*partial*"))


def test_the_corpus_covers_bad_input_and_a_full_disk_is_tested_apart():
    # A full disk (exit 1) is tested in tests/cli/test_outputs.py: /dev/full, a device,
    # is refused as an output before anything runs.
    assert {c[2] for c in CASES} == {2}
    assert len(CASES) >= 35


# -- what agents and models send is data, never an error -----------------------


@pytest.mark.parametrize(
    "arguments",
    [DEEP, '{"S1": ' + HUGE + "}", '{"S1": NaN, "S2": 1}', "\ud83d", 5, None, [1, 2]],
    ids=["deep", "huge-int", "nan", "lone-surrogate", "number", "null", "list"],
)
def test_odd_tool_arguments_are_labelled_not_raised(capsys, tmp_path: Path, arguments):
    messages = write(tmp_path / "m.json", tool_call_messages(arguments))
    code, out, err = cli(capsys, "replay", "--scenario", SCENARIO, "--messages", messages, "--json")
    assert code in (0, 1) and "Traceback" not in err
    kinds = {lab["kind"] for lab in json.loads(out)["labels"]}
    assert kinds & {"invalid_arguments", "wrong_argument"}  # the call was judged, as data


def _subprocess(*argv: object) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "agentproc", *map(str, argv)], capture_output=True, env=env
    )


def test_lone_surrogates_in_a_run_file_are_printed_escaped(tmp_path: Path, base: Base):
    messages = [{"role": "assistant", "content": "\ud83d oops \udc00"}]
    calls = [["\udc00", '{"S1": "\ud83d"}', *base.record["calls"][0][2:]]]
    run = record_with(base, tmp_path, messages=messages, calls=calls)
    done = _subprocess("replay", run, "--episode", base.record["scenario_id"])
    assert b"Traceback" not in done.stderr and done.returncode in (0, 1), done.stderr
    shown = _subprocess("replay", run, "--json")
    assert shown.returncode in (0, 1) and b"Traceback" not in shown.stderr


def test_lone_surrogates_in_messages_are_printed_escaped(tmp_path: Path):
    messages = write(tmp_path / "m.json", tool_call_messages('{"S1": "\\ud83d"}'))
    done = _subprocess("replay", "--scenario", SCENARIO, "--messages", messages)
    assert b"Traceback" not in done.stderr and done.returncode in (0, 1), done.stderr


# -- one writer per run file ------------------------------------------------------


@pytest.mark.parametrize("how", ["--overwrite", "--resume"])
def test_a_second_writer_is_refused_and_changes_nothing(tmp_path: Path, base: Base, how: str):
    run = tmp_path / "run.jsonl"
    shutil.copy(base.run, run)
    before = run.read_bytes()
    with RunWriter(run, append=True):  # another process's run, holding the file
        done = _subprocess("run", base.suite, *SIM, how, "--out", run)
    assert done.returncode == 2, done.stderr
    err = done.stderr.decode().strip().splitlines()
    assert len(err) == 1 and "another agentproc process is writing this run file" in err[0]
    assert run.read_bytes() == before


def test_concurrent_runs_on_one_file_leave_one_whole_run(tmp_path: Path, base: Base):
    suite = tmp_path / "suite"
    assert main(["generate", "--steps", "10", "--count", "150", "--out", str(suite)]) == 0
    run = tmp_path / "run.jsonl"
    argv = [sys.executable, "-m", "agentproc", "run", str(suite), *SIM, "--overwrite",
            "--out", str(run)]  # fmt: skip
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]  # fmt: skip
    codes = sorted(p.wait(timeout=120) for p in procs)
    assert codes[0] == 0 and codes[1] in (0, 2)
    records = [r for _, r in read_run(run)]
    assert len(records) == 150  # never two runs interleaved in one file
    assert len({r["scenario_id"] for r in records}) == 150


# -- a full disk -------------------------------------------------------------------


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A 48 KiB tmpfs: a run on it fills it up."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_full_disk_exits_1_in_one_line_keeping_every_finished_episode(
    capsys, tmp_path: Path, tiny_disk: Path
):
    suite = tmp_path / "suite"
    assert main(["generate", "--steps", "5", "--count", "40", "--out", str(suite)]) == 0
    capsys.readouterr()
    run = tiny_disk / "run.jsonl"
    code, _, err = cli(capsys, "run", suite, *SIM, "--out", run)
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0] and str(run) in lines[0]
    kept = tmp_path / "kept.jsonl"
    shutil.copy(run, kept)  # the disk is full: go on elsewhere
    written = [r for _, r in read_run(kept)]
    assert 0 < len(written) < 40
    code, out, err = cli(capsys, "run", suite, *SIM, "--resume", "--out", kept)
    assert code == 0 and f"({len(written)} already done)" in out
    assert len([r for _, r in read_run(kept)]) == 40


def test_a_full_disk_during_generate_keeps_the_old_suite(capsys, tmp_path: Path, tiny_disk: Path):
    suite = tiny_disk / "suite"
    assert main(["generate", "--steps", "3", "--count", "2", "--out", str(suite)]) == 0
    before = snapshot(suite)
    code, _, err = cli(
        capsys, "generate", "--steps", "95", "--count", "200", "--overwrite", "--out", suite
    )
    assert code == 1 and "No space left on device" in err and len(err.strip().splitlines()) == 1
    assert snapshot(suite) == before
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["suite"]


# -- credentials ---------------------------------------------------------------------


def test_url_credentials_and_authorization_never_reach_a_file_or_the_screen(
    capsys, tmp_path: Path, base: Base, monkeypatch: pytest.MonkeyPatch
):
    from fakes.openai_server import ScriptedServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET123")
    basic = base64.b64encode(b"ann:hunter2-pass").decode()
    replies = [{"status": 401, "echo_headers": True,
                "message": "bad key test-SECRET123 for ann:hunter2-pass"}] * 8  # fmt: skip
    with ScriptedServer(replies) as srv:
        url = srv.base_url.replace("http://", "http://ann:hunter2-pass@")
        run = tmp_path / "run.jsonl"
        code, out, err = cli(
            capsys, "run", base.suite, "--agent", "openai:m", "--base-url", url,
            "--retries", "0", "--out", run,
        )  # fmt: skip
        sent = srv.completions[0].headers.get("authorization", "")
    assert code == 3
    _, shown, shown_err = cli(capsys, "replay", run, "--json")
    everything = run.read_text() + out + err + shown + shown_err
    everything += cli(capsys, "report", run, "--json")[1]
    for secret in ("hunter2-pass", basic, "SECRET123", "sk-test"):
        assert secret not in everything
    assert "[REDACTED]" in run.read_text()
    assert sent  # the server was sent credentials, so there was something to redact


# -- files the user may not read ----------------------------------------------------


@pytest.fixture
def unreadable(monkeypatch: pytest.MonkeyPatch):
    """Make chosen paths unreadable (``chmod 000`` does not stop root, who runs CI)."""
    import builtins
    import io

    denied: set[str] = set()
    real_open = builtins.open

    def guarded(file, *args, **kwargs):
        if str(file) in denied:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded)
    monkeypatch.setattr(io, "open", guarded)
    return denied


@pytest.mark.parametrize("command", ["report", "replay", "relabel"])
def test_an_unreadable_run_file_is_one_line(capsys, tmp_path, base, unreadable, command):
    run = tmp_path / "run.jsonl"
    shutil.copy(base.run, run)
    unreadable.add(str(run))
    code, _, err = cli(capsys, command, run)
    assert code == 2 and err.strip() == f"agentproc: error: {run}: cannot read: Permission denied"


def test_an_unreadable_procedures_file_is_one_line(capsys, tmp_path, base, unreadable):
    suite = copy_suite(base, tmp_path)
    unreadable.add(str(suite / "procedures.jsonl"))
    code, _, err = cli(capsys, "run", suite, *SIM, "--out", tmp_path / "r.jsonl")
    assert code == 2 and "procedures.jsonl: cannot read: Permission denied" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "r.jsonl").exists()


def test_an_unreadable_preset_is_one_line(capsys, tmp_path, unreadable):
    preset = write(tmp_path / "p.json", "{}")
    unreadable.add(str(preset))
    code, _, err = cli(capsys, "generate", "--preset", preset, "--out", tmp_path / "o")
    assert (
        code == 2 and err.strip() == f"agentproc: error: {preset}: cannot read: Permission denied"
    )
