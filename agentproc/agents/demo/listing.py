"""The steps as the prompt lists them, in any rendering a variant writes.

A model that is offered tools without descriptions (or generic calculator tools) still has
the prompt's step list: it reads each step's number, its tool where the prompt names one,
its output variable and what it computes. The four renderings are read here: a numbered
list (``3. subtotal: subtotal = amount_a + amount_b, rounded to 2 decimals (...)``, or
``3. S5 = S4 * S2``), prose (``Then, compute S5 as S4 times S2 (step 3).``), pseudo-code
(``S5 <- S4 * S2    # step 3``) and JSON (one object a line). Whichever rendering reads
the most steps is taken, so a prompt template of one's own may put the list anywhere.

A branched workflow's list also gives each conditional step its condition (``...; only
when needs_manager``, ``if needs_manager: approved <- ...``, a JSON row's ``when``), a
step whose value is a category or a boolean without rounding (``4. check: flag = refund >
500``), and its exits in their places (``Exit NAME: if COND, stop here: call FINISH with
ANSWER``; :func:`listed_exits`), each checked before the step that follows it.

>>> [s.formula for s in listed_steps("Steps:\\n1. S3 = S1 * S2\\n2. S4 = S3 - 2.5")]
['S1 * S2', 'S3 - 2.5']
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentproc.declared import formula

_NAME = r"[A-Za-z_]\w*"
_TERM = rf"-?\d+(?:\.\d+)?|{_NAME}"
_ROUNDED = r"(.+?), rounded to (\d+) decimals"
_NUMBERED = re.compile(rf"^\s*(\d+)\. (?:({_NAME}): )?({_NAME}) = {_ROUNDED}", re.MULTILINE)
_NUMBERED_OP = re.compile(
    rf"^\s*(\d+)\. ({_NAME}) = ({_TERM}) ([-+*/]) ({_TERM})\s*$", re.MULTILINE
)
_NUMBERED_ANY = re.compile(rf"^\s*(\d+)\. (?:({_NAME}): )?({_NAME}) = (.+?)\s*$", re.MULTILINE)
"""A numbered step of any kind (one whose value is a category or a boolean is not rounded)."""
_PROSE = re.compile(
    rf"(?:First|Then|Finally), (?:call ({_NAME}) to )?compute ({_NAME}) = (.+?) \(step (\d+)\)\.",
    re.DOTALL,
)
_PROSE_ROUNDED = re.compile(_ROUNDED, re.DOTALL)
_PROSE_OP = re.compile(
    rf"(?:First|Then|Finally), compute ({_NAME}) as ({_TERM}) "
    rf"(plus|minus|times|divided by) ({_TERM}) \(step (\d+)\)\."
)
_PSEUDO = re.compile(
    rf"^\s+(?:if (.+?): )?({_NAME}) <- (.+?)\s+# step (\d+)(?:: ({_NAME}))?\s*$", re.MULTILINE
)
_ROUND_CALL = re.compile(r"^round\((.+), (\d+)\)$")
_JSON_ROW = re.compile(r"^\s*(\{.*\})\s*$", re.MULTILINE)
_WORDS = {"plus": "+", "minus": "-", "times": "*", "divided by": "/"}
_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_ONLY_WHEN = "; only when "
_VALUE = r'"(?:[^"\\]|\\.)*"|true|false|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?'
_ANSWER = rf"{_NAME} = (?:{_VALUE})(?:, {_NAME} = (?:{_VALUE}))*|{_VALUE}"
"""An exit's answer as written: a value, or a multi-field answer's ``field = value, ...``."""
_FIELD = re.compile(rf"({_NAME}) = ({_VALUE})")
_EXIT_NUMBERED = re.compile(
    rf"^\s*Exit ({_NAME}): if (.+?), stop here: call {_NAME} with ({_ANSWER})", re.MULTILINE
)
_MARK_NUMBERED = re.compile(rf"^\s*(\d+)\. (?:{_NAME}: )?{_NAME} = ", re.MULTILINE)
_EXIT_PROSE = re.compile(
    rf"At this point, if (.+?), stop here: call {_NAME} with ({_ANSWER})", re.DOTALL
)
_MARK_PROSE = re.compile(r"\(step (\d+)\)\.")
_EXIT_PSEUDO = re.compile(rf"^\s+if (.+?): return ({_ANSWER})\s+# exit ({_NAME})\s*$", re.MULTILINE)
_MARK_PSEUDO = re.compile(r"# step (\d+)")

Answer = bool | int | float | str | dict[str, bool | int | float | str]
"""An exit's answer: a number, a category or a boolean (a multi-field answer's: each
field's)."""


@dataclass(frozen=True)
class Listed:
    """One step as the prompt lists it."""

    number: int
    """Its number in the list (1 first)."""
    tool: str | None
    """The tool the prompt names for it (``None``: it names none)."""
    output: str
    """The variable it computes."""
    formula: str
    """What it computes, as written: ``S4 * S2``, ``S3 - 2.5``, ``net * tax_rate``."""
    decimals: int | None
    """A declared step's rounding (``None``: a procedure's step, rounded as its mode is,
    or a step whose value is a category or a boolean: ``typed``)."""
    when: str | None = None
    """A branched workflow's step: its condition (``None``: it always runs)."""
    typed: bool = False
    """A declared step whose value is a category or a boolean (no rounding)."""


@dataclass(frozen=True)
class ListedExit:
    """An exit as the prompt lists it: where its condition holds, the workflow ends there
    with its answer."""

    name: str | None
    after: int
    """The number of the step listed before it (0: none): it is checked before the next."""
    when: str
    answer: Answer


def listed_steps(prompt: str) -> list[Listed]:
    """The steps the prompt lists, by number (empty: it lists none that can be read)."""
    best: list[Listed] = []
    for read in _READERS:
        found = {s.number: s for s in read(prompt)}
        if len(found) > len(best):
            best = [found[n] for n in sorted(found)]
    return best


def listed_exits(prompt: str) -> list[ListedExit]:
    """The exits the prompt lists, in order (whichever rendering reads the most)."""
    best: list[ListedExit] = []
    for read in (_numbered_exits, _prose_exits, _pseudocode_exits, _json_exits):
        found = read(prompt)
        if len(found) > len(best):
            best = found
    return best


def leading_formula(text: str) -> tuple[str, str] | None:
    """The formula ``text`` starts with (a typed one: categories, booleans, conditions) and
    what follows it: the shortest part that parses and ends the text or stops before
    `` (`` (a description) or ``; `` (a condition); ``None``: none."""
    ends = [m.start() for m in re.finditer(r" \(|; ", text)]
    for end in [*ends, len(text)]:
        head = text[:end].strip()
        if head and _parses(head):
            return head, text[end:]
    return None


def split_head(text: str) -> tuple[str, int | None, str | None] | None:
    """A declared step's text after ``output = ``: its formula, decimals (``None``: a
    category's or boolean's) and condition (``None``: none); ``None``: not one."""
    rounded = _PROSE_ROUNDED.match(text)
    if rounded:
        formula_text, decimals, rest = rounded[1], int(rounded[2]), text[rounded.end() :]
    else:
        lead = leading_formula(text)
        if lead is None:
            return None
        (formula_text, rest), decimals = lead, None
    return formula_text, decimals, condition_after(rest)


def condition_after(rest: str) -> str | None:
    """The condition a step's text gives after its formula and rounding (``; only when
    COND``), if any."""
    if not rest.startswith(_ONLY_WHEN):
        return None
    lead = leading_formula(rest[len(_ONLY_WHEN) :])
    return None if lead is None else lead[0]


def _parses(text: str) -> bool:
    try:
        formula.parse(text, True)
    except formula.FormulaError:
        return False
    return True


def _typed_value(text: str) -> bool:
    """Whether a formula's value is a category or a boolean by its form (a comparison, a
    condition, a choice or a literal): one a step without rounding may have."""
    try:
        tree = formula.parse(text, True)
    except formula.FormulaError:
        return False
    return isinstance(tree, formula.Cmp | formula.Logic | formula.Choose | formula.Lit)


def _line_rest(prompt: str, at: int) -> str:
    end = prompt.find("\n", at)
    return prompt[at : len(prompt) if end < 0 else end]


def _numbered(prompt: str) -> list[Listed]:
    rows = [
        Listed(int(m[1]), m[2], m[3], m[4], int(m[5]), condition_after(_line_rest(prompt, m.end())))
        for m in _NUMBERED.finditer(prompt)
    ]
    rows += [
        Listed(int(m[1]), None, m[2], f"{m[3]} {m[4]} {m[5]}", None)
        for m in _NUMBERED_OP.finditer(prompt)
    ]
    seen = {row.number for row in rows}
    for m in _NUMBERED_ANY.finditer(prompt):  # a category's or a boolean's step
        lead = leading_formula(m[4]) if int(m[1]) not in seen else None
        if lead is not None and _typed_value(lead[0]):
            rows.append(
                Listed(int(m[1]), m[2], m[3], lead[0], None, condition_after(lead[1]), True)
            )
    return rows


def _prose(prompt: str) -> list[Listed]:
    rows = []
    for m in _PROSE.finditer(prompt):
        rounded = _PROSE_ROUNDED.match(m[3])
        if rounded:
            when = condition_after(m[3][rounded.end() :])
            rows.append(Listed(int(m[4]), m[1], m[2], rounded[1], int(rounded[2]), when))
        elif (lead := leading_formula(m[3])) is not None and _typed_value(lead[0]):
            when = condition_after(lead[1])
            rows.append(Listed(int(m[4]), m[1], m[2], lead[0], None, when, True))
    rows += [
        Listed(int(m[5]), None, m[1], f"{m[2]} {_WORDS[m[3]]} {m[4]}", None)
        for m in _PROSE_OP.finditer(prompt)
    ]
    return rows


def _pseudocode(prompt: str) -> list[Listed]:
    rows = []
    for m in _PSEUDO.finditer(prompt):
        when, output, value, number, tool = m[1], m[2], m[3], int(m[4]), m[5]
        if rounded := _ROUND_CALL.match(value):
            rows.append(Listed(number, tool, output, rounded[1], int(rounded[2]), when))
        elif _typed_value(value):
            rows.append(Listed(number, tool, output, value, None, when, True))
        else:
            rows.append(Listed(number, tool, output, value, None, when))
    return rows


def _json(prompt: str) -> list[Listed]:
    rows = []
    for row in _json_rows(prompt):
        if (step := _json_step(row)) is not None:
            rows.append(step)
    return rows


def _json_rows(prompt: str) -> list[dict[str, object]]:
    rows = []
    for m in _JSON_ROW.finditer(prompt):
        try:
            row = json.loads(m[1])
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _json_step(row: dict[str, object]) -> Listed | None:
    number, output, tool = row.get("step"), row.get("output"), row.get("tool")
    if not isinstance(number, int) or not isinstance(output, str):
        return None
    tool = tool if isinstance(tool, str) else None
    formula_text, decimals, when = row.get("formula"), row.get("decimals"), row.get("when")
    when = when if isinstance(when, str) else None
    if isinstance(formula_text, str) and isinstance(decimals, int):
        return Listed(number, tool, output, formula_text, decimals, when)
    if isinstance(formula_text, str) and decimals is None and _typed_value(formula_text):
        return Listed(number, tool, output, formula_text, None, when, True)
    op, left, right = row.get("op"), row.get("left"), row.get("right")
    terms = (left, right)
    if isinstance(op, str) and op in _OPS and all(isinstance(t, str | int | float) for t in terms):
        return Listed(number, tool, output, f"{left} {_OPS[op]} {right}", None)
    return None


def _after(marks: re.Pattern[str], prompt: str, at: int) -> int:
    """The number of the last step marked before ``at`` (0: none)."""
    numbers = [int(m[1]) for m in marks.finditer(prompt, 0, at)]
    return numbers[-1] if numbers else 0


def _answer(text: str) -> Answer | None:
    if _FIELD.match(text):  # a multi-field answer: field = value, ...
        fields = {m[1]: _answer(m[2]) for m in _FIELD.finditer(text)}
        given = {f: v for f, v in fields.items() if v is not None and not isinstance(v, dict)}
        return given if len(given) == len(fields) else None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, bool | int | float | str) else None


def _exits(
    prompt: str, found: Sequence[tuple[int, str | None, str, str]], marks: re.Pattern[str]
) -> list[ListedExit]:
    """``found``: each exit's offset, name, condition and answer as written."""
    exits = []
    for at, name, when, answer in found:
        value = _answer(answer)
        if value is not None and _parses(when):
            exits.append(ListedExit(name, _after(marks, prompt, at), when, value))
    return exits


def _numbered_exits(prompt: str) -> list[ListedExit]:
    found = [(m.start(), m[1], m[2], m[3]) for m in _EXIT_NUMBERED.finditer(prompt)]
    return _exits(prompt, found, _MARK_NUMBERED)


def _prose_exits(prompt: str) -> list[ListedExit]:
    found = [(m.start(), None, m[1], m[2]) for m in _EXIT_PROSE.finditer(prompt)]
    return _exits(prompt, found, _MARK_PROSE)


def _pseudocode_exits(prompt: str) -> list[ListedExit]:
    found = [(m.start(), m[3], m[1], m[2]) for m in _EXIT_PSEUDO.finditer(prompt)]
    return _exits(prompt, found, _MARK_PSEUDO)


def _json_exits(prompt: str) -> list[ListedExit]:
    exits: list[ListedExit] = []
    after = 0
    for row in _json_rows(prompt):
        number, name, when, answer = (
            row.get("step"),
            row.get("exit"),
            row.get("when"),
            row.get("answer"),
        )
        if isinstance(number, int):
            after = number
        elif isinstance(name, str) and isinstance(when, str) and _parses(when):
            value = answer if isinstance(answer, bool | int | float | str | dict) else None
            if value is not None:
                exits.append(ListedExit(name, after, when, value))
    return exits


_READERS: tuple[Callable[[str], list[Listed]], ...] = (_numbered, _prose, _pseudocode, _json)
"""Each rendering's reader; ties go to the earlier."""
