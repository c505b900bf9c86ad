"""How the formula parser (:mod:`agentproc.declared.formula`) names a node of Python's
own tree that its grammar refuses: ``the operator '**'``, ``a comparison``. Pure."""

from __future__ import annotations

import ast

_SYMBOLS: dict[type, str] = {
    ast.Pow: "**",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.MatMult: "@",
    ast.Not: "not",
    ast.Invert: "~",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
}


def describe(node: ast.expr) -> str:
    """How an error names a node of Python's tree that the grammar refuses."""
    if isinstance(node, ast.BinOp | ast.UnaryOp):
        return f"the operator {_SYMBOLS.get(type(node.op), type(node.op).__name__)!r}"
    if isinstance(node, ast.BoolOp):
        return "a boolean operator"
    if isinstance(node, ast.Compare):
        return "a comparison"
    return f"{type(node).__name__.lower()} {ast.unparse(node)!r}"
