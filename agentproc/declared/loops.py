"""Lists and loops in a declared workflow (format 2): a list input, a step done for each
of its items (``for_each = "owner in owners"``), and the aggregates ``count``, ``all``
and ``any`` over what the loop computed, all expanded into a plain workflow of format 2.

A list input (``type = "list"``, ``choices``, ``count = [low, high]``) draws, for every
instance, how many items it holds and then that many distinct names, in the order drawn
(:func:`draw_items`). Each looped step becomes one step per item, ``verify_owner[0]``,
``verify_owner[1]``, ...; inside it the item variable is that item, and a looped output
over the same list is that item's own. Outside a loop a looped output is read only in an
aggregate of one boolean condition: ``count(share >= 25)`` (how many items it holds for),
``all(...)``, ``any(...)``, which expand into ``ifelse(c0, 1, 0) + ...``, ``c0 and ...``
and ``c0 or ...``. Nothing else is expanded: the rewritten formulas are then read by the
strict walk of :mod:`agentproc.declared.formula` and checked by
:func:`~agentproc.declared.check.check_spec` as any other, and an error it
finds names the step and field as the file writes them (``steps[4] (verify_owner).when``)
and an expanded variable as ``share[1]``.

Inside, an expanded name is ``name__i`` (a variable name must be one); :func:`shown`
spells it ``name[i]``. The file's own checks run on the expansion at each list's largest
count, every item free to be any of its choices (:func:`check_looped`); an instance's
expansion binds each item to its drawn name (:func:`instance_workflow`).
"""

from __future__ import annotations

import ast
import dataclasses
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from agentproc.declared.check import check_spec
from agentproc.declared.inputs import InputSpec
from agentproc.declared.spec import (
    DeclaredWorkflow,
    Entry,
    ExitSpec,
    StepSpec,
    WorkflowSpec,
)
from agentproc.errors import InputError

AGGREGATES = ("count", "all", "any")
"""The functions that read a looped output outside its loop."""

_FOR_EACH = re.compile(
    r"^\s*([A-Za-z_][A-Za-z0-9_]{0,63})\s+in\s+([A-Za-z_][A-Za-z0-9_]{0,63})\s*$"
)
_SUFFIX = re.compile(r"__\d+$")
_EXPANDED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*?)__(\d+)\b")


def has_loops(spec: WorkflowSpec) -> bool:
    """Whether the file declares a list input or a looped step."""
    return any(i.is_list for i in spec.inputs.values()) or any(
        isinstance(s, StepSpec) and s.for_each is not None for s in spec.steps
    )


def expanded(name: str, item: int) -> str:
    """The inside name of ``name`` for item ``item``: ``share__1``."""
    return f"{name}__{item}"


def shown(text: str) -> str:
    """Expanded names as reports write them: ``verify_owner__2`` -> ``verify_owner[2]``.

    >>> shown("share__0 >= 25")
    'share[0] >= 25'
    """
    return _EXPANDED.sub(r"\1[\2]", text)


@dataclasses.dataclass(frozen=True)
class _Loops:
    """What a file's lists and loops declare."""

    lists: Mapping[str, InputSpec]
    """List input -> its specification."""
    loops: Mapping[int, tuple[str, str]]
    """Listed step position -> (item, list) of its ``for_each``."""
    outputs: Mapping[str, str]
    """Looped output -> the list it is looped over."""
    items: Mapping[str, str]
    """Item variable -> its list."""


def _label(spec: WorkflowSpec, k: int) -> str:
    s = spec.steps[k]
    return f"steps[{k}] ({s.name if isinstance(s, ExitSpec) else s.tool})"


def _loops(spec: WorkflowSpec, where: str) -> _Loops:
    """The lists and loops, each checked: format 2, a known list, an item named apart
    from every variable, table and list, no loop over an item, no looped answer."""
    lists = {n: i for n, i in spec.inputs.items() if i.is_list}
    if spec.format != 2:
        field = next((f"inputs.{n}.type" for n in lists), None)
        for k, s in enumerate(spec.steps):
            if field is None and isinstance(s, StepSpec) and s.for_each is not None:
                field = f"{_label(spec, k)}.for_each"
        raise InputError(where, "lists and loops need format = 2", field)
    taken = {**{n: "an input" for n in spec.inputs}, **{t: "a table" for t in spec.tables or {}}}
    for s in spec.steps:
        if isinstance(s, StepSpec):
            taken.setdefault(s.output, "a step's output")
    loops: dict[int, tuple[str, str]] = {}
    items: dict[str, str] = {}
    for k, s in enumerate(spec.steps):
        if not isinstance(s, StepSpec) or s.for_each is None:
            continue
        field = f"{_label(spec, k)}.for_each"
        if k == len(spec.steps) - 1:
            raise InputError(where, "the answer's step cannot be looped", field)
        match = _FOR_EACH.match(s.for_each)
        if match is None:
            raise InputError(where, f"{s.for_each!r}: expected 'item in list'", field)
        item, over = match.groups()
        if over in items:
            raise InputError(
                where,
                f"{s.for_each!r}: {over!r} is the item of another loop: loops do not nest",
                field,
            )
        if over not in lists:
            known = ", ".join(lists) or "none"
            raise InputError(
                where, f"{s.for_each!r}: {over!r} is no list input (the lists: {known})", field
            )
        if item in taken:
            raise InputError(where, f"{s.for_each!r}: {item!r} is already {taken[item]}", field)
        if items.get(item, over) != over:
            raise InputError(
                where, f"{s.for_each!r}: {item!r} is already the item of {items[item]}", field
            )
        if item not in _names(s.formula):  # its one tool finds a call's step by the item
            raise InputError(
                where,
                f"{s.formula!r}: a looped step's formula reads its item {item!r} (its tool "
                "is called with it)",
                f"{_label(spec, k)}.formula",
            )
        items[item] = over
        loops[k] = (item, over)
    for name in lists:
        if name not in items.values():
            raise InputError(where, "no step loops over this list", f"inputs.{name}.type")
    outputs = {spec.steps[k].output: over for k, (_, over) in loops.items()}  # type: ignore[union-attr]
    return _Loops(lists, loops, outputs, items)


def _names(text: str) -> set[str]:
    """The names a formula's text reads (none for text that does not parse: the strict
    walk then says why)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


class _Rewrite(ast.NodeTransformer):
    """One formula's names bound and aggregates expanded (an error: a ``ValueError``).
    Only names and the aggregates' calls are replaced; everything else is left for the
    strict walk of :func:`agentproc.declared.formula.parse` to accept or refuse."""

    def __init__(self, loops: _Loops, sizes: Mapping[str, int], over: str | None, at: int):
        self.loops, self.sizes, self.over, self.at = loops, sizes, over, at
        self.inside: str | None = None
        """The list of the aggregate being expanded (``None``: none)."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        lp, name = self.loops, node.id
        if name in lp.lists:
            raise ValueError(f"the list {name!r} is read by for_each, not in a formula")
        over = lp.outputs.get(name) or lp.items.get(name)
        if over is None:
            return node
        if self.over is None and self.inside is None:
            if name in lp.items:
                return node  # no variable here: the checks say so
            raise ValueError(
                f"{name!r} is computed for each item of {over}: read it in "
                f"{', '.join(f'{a}(...)' for a in AGGREGATES)}"
            )
        if (self.inside or self.over) != over:
            raise ValueError(
                f"{name!r} is looped over {over}, not {self.inside or self.over}: loops do not nest"
            )
        # The item is its list's input of that item; a looped output, that item's own.
        bound = expanded(over if name in lp.items else name, self.at)
        return ast.copy_location(ast.Name(bound, ast.Load()), node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        fn = node.func.id if isinstance(node.func, ast.Name) else None
        if fn not in AGGREGATES:
            return self.generic_visit(node)
        if self.over is not None or self.inside is not None:
            raise ValueError(f"{fn}() reads a whole list: not inside a loop or another {fn}()")
        if len(node.args) != 1 or node.keywords:
            raise ValueError(f"{fn}() takes one condition")
        cond = node.args[0]
        reads = {n.id for n in ast.walk(cond) if isinstance(n, ast.Name)}
        lists = {self.loops.outputs.get(n) or self.loops.items.get(n) for n in reads} - {None}
        if not lists:
            raise ValueError(
                f"{fn}() reads no looped value: its condition must read a step's "
                "output computed for each item"
            )
        if len(lists) > 1:
            raise ValueError(f"{fn}() reads the loops of {' and '.join(sorted(lists))}")  # type: ignore[arg-type]
        (self.inside,) = lists
        parts = []
        for i in range(self.sizes[self.inside]):  # type: ignore[index]
            self.at = i
            parts.append(self.visit(_copy(cond)))
        self.inside = None
        return ast.copy_location(_combine(fn, parts), node)


def _copy(node: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(node), mode="eval").body


def _combine(fn: str, parts: list[ast.expr]) -> ast.expr:
    if fn == "all":
        return ast.BoolOp(ast.And(), parts) if len(parts) > 1 else parts[0]
    if fn == "any":
        return ast.BoolOp(ast.Or(), parts) if len(parts) > 1 else parts[0]
    ones = [
        ast.Call(ast.Name("ifelse", ast.Load()), [p, ast.Constant(1), ast.Constant(0)], [])
        for p in parts
    ]
    total: ast.expr = ones[0]
    for one in ones[1:]:
        total = ast.BinOp(total, ast.Add(), one)
    return total


def _rewrite(
    text: str, loops: _Loops, sizes: Mapping[str, int], over: str | None = None, at: int = 0
) -> str:
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, RecursionError, MemoryError):
        return text  # the strict walk says why
    return ast.unparse(_Rewrite(loops, sizes, over, at).visit(tree))


def expand(
    spec: WorkflowSpec, items: Mapping[str, Sequence[str | None]], where: str = "workflow"
) -> WorkflowSpec:
    """The plain workflow of format 2 with each list's items ``items[list]`` (a name, or
    ``None``: any of its choices): each list input one category input per item, each
    looped step one step per item, each aggregate written out."""
    lp = _loops(spec, where)
    sizes = {n: len(v) for n, v in items.items()}
    inputs: dict[str, InputSpec] = {}
    for name, given in spec.inputs.items():
        if not given.is_list:
            inputs[name] = given
            continue
        for k, item in enumerate(items[name]):
            inputs[expanded(name, k)] = InputSpec(
                description=f"{given.description.strip()} (item {k})".strip(),
                type="category",
                choices=list(given.choices or ()),
                # An instance's item: its name alone drawn, its type still the list's.
                weights=None if item is None else [int(c == item) for c in given.choices or ()],
            )
    steps: list[Entry] = []
    for k, s in enumerate(spec.steps):
        try:
            if isinstance(s, ExitSpec):
                steps.append(s.model_copy(update={"when": _rewrite(s.when, lp, sizes)}))
                continue
            over = lp.loops[k][1] if k in lp.loops else None
            for i in range(1 if over is None else sizes[over]):
                new: dict[str, Any] = {"formula": _rewrite(s.formula, lp, sizes, over, i)}
                if s.when is not None:
                    new["when"] = _rewrite(s.when, lp, sizes, over, i)
                if over is not None:
                    new |= {"tool": expanded(s.tool, i), "output": expanded(s.output, i)}
                    new["for_each"] = None
                steps.append(s.model_copy(update=new))
        except ValueError as exc:
            raise InputError(where, str(exc), _which(s, lp, sizes, k, spec)) from None
    return spec.model_copy(update={"inputs": inputs, "steps": steps})


def _fails(text: str, lp: _Loops, sizes: Mapping[str, int], k: int) -> bool:
    over = lp.loops.get(k, (None, None))[1]
    try:
        _rewrite(text, lp, sizes, over, 0)
    except ValueError:
        return True
    return False


def _which(s: Entry, lp: _Loops, sizes: Mapping[str, int], k: int, spec: WorkflowSpec) -> str:
    """The field whose rewriting failed: the formula, else the ``when``."""
    if isinstance(s, ExitSpec):
        return f"{_label(spec, k)}.when"
    return f"{_label(spec, k)}.{'formula' if _fails(s.formula, lp, sizes, k) else 'when'}"


_STEP = re.compile(r"^steps\[\d+\] \(([^)]*)\)")
_INPUT = re.compile(r"^inputs\.([A-Za-z_][A-Za-z0-9_]*?)__\d+")


@contextmanager
def file_fields(spec: WorkflowSpec | None, where: str) -> Iterator[None]:
    """An :class:`InputError` raised on an expansion of ``spec`` re-raised naming the
    field as the file writes it (its step and input) and expanded names as shown
    (``None``: a workflow without loops, whose errors pass unchanged)."""
    if spec is None:
        yield
        return
    try:
        yield
    except InputError as exc:
        field = exc.field
        if field is not None and (m := _STEP.match(field)):
            base = _SUFFIX.sub("", m[1])  # an expanded step's tool: its listed step's
            names = [s.name if isinstance(s, ExitSpec) else s.tool for s in spec.steps]
            if base in names:
                field = _label(spec, names.index(base)) + field[m.end() :]
        if field is not None:
            field = _INPUT.sub(r"inputs.\1", field)
        message = str(exc).removeprefix(f"{exc.path}: ").removeprefix(f"{exc.field}: ")
        raise InputError(where, shown(message), field) from None


def _high(spec: InputSpec) -> int:
    return (spec.count or (1, 1))[1]


def check_looped(spec: WorkflowSpec, where: str = "workflow") -> DeclaredWorkflow:
    """The checked expansion at each list's largest count, any item any of its choices
    (what :func:`~agentproc.declared.check.check_spec` finds named as the file
    writes it), holding the file as written in ``looped``."""
    lp = _loops(spec, where)
    free: dict[str, list[str | None]] = {n: [None] * _high(i) for n, i in lp.lists.items()}
    plain = expand(spec, free, where)  # its errors name the file's own fields
    with file_fields(spec, where):
        wf = check_spec(plain, where)
    return dataclasses.replace(wf, looped=spec)


def draw_items(spec: WorkflowSpec, seed: int, index: int) -> dict[str, tuple[str, ...]]:
    """Each list's items for instance ``index``: how many, then which (distinct, in the
    order drawn), seeded apart from the other inputs."""
    rng = random.Random(f"agentproc:workflow:{seed}:{index}:items")
    items: dict[str, tuple[str, ...]] = {}
    for name, i in spec.inputs.items():
        if i.is_list:
            low, high = i.count or (1, 1)
            items[name] = tuple(
                str(c) for c in rng.sample(list(i.choices or ()), rng.randint(low, high))
            )
    return items


def instance_workflow(wf: DeclaredWorkflow, items: Mapping[str, Sequence[str]]) -> DeclaredWorkflow:
    """The workflow an instance with these items is drawn from: the file expanded with
    each item bound to its name (``wf``: :func:`check_looped`'s)."""
    spec = wf.looped
    if spec is None:
        return wf
    plain = expand(spec, items, wf.where)
    with file_fields(spec, wf.where):
        out = check_spec(plain, wf.where)
    return dataclasses.replace(out, looped=spec)


def path_kind(name: str) -> str:
    """A path's name whatever the items: each looped step once, without its item
    (``verify_owner__0+verify_owner__2+check_capital`` -> ``verify_owner+check_capital``).

    >>> path_kind("verify_owner__0+verify_owner__2+check_capital")
    'verify_owner+check_capital'
    """
    return "+".join(dict.fromkeys(_SUFFIX.sub("", part) for part in name.split("+")))
