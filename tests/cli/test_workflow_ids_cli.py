"""Bad ids, dates and drawn records in a workflow file: ``generate --workflow`` says what is
wrong in one line naming the file and the field, exits 2 and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentproc.cli import main
from agentproc.resources import folder

RETURN_WINDOW = (folder("workflows") / "return_window.toml").read_text(encoding="utf-8")

BAD: list[tuple[str, str, str]] = [
    (
        'key_pattern = "ORD-[0-9]{5}"',
        'key_pattern = "ORD-[0-9]+"',
        "tables.orders.key_pattern: '+' at 9 is not allowed",
    ),
    (
        'key_pattern = "CUS-[0-9]{4}"',
        'key_pattern = "CUS-[0-9]"',
        "tables.customers.key_pattern: it draws 10 distinct keys: too few for 6",
    ),
    ("count = [4, 8]", "count = [5, 2]", "tables.orders.count: [low, high] with 1 <= low"),
    (
        'count = [3, 6]\nkey_pattern = "CUS-[0-9]{4}"\n',
        "count = [3, 6]\n",
        "tables.customers.key_pattern: a table of drawn records gives both",
    ),
    (
        'range = ["2026-07-15", "2026-08-10"]',
        'range = ["2026-07-15", "2026-8-10"]',
        "inputs.request_date: range: '2026-8-10' is not an ISO date (YYYY-MM-DD)",
    ),
    (
        'range = ["2026-07-15", "2026-08-10"]',
        'range = ["2026-08-15", "2026-08-10"]',
        "inputs.request_date: range: 2026-08-15 is after 2026-08-10",
    ),
    (
        'key_of = "orders"',
        'key_of = "invoices"',
        "inputs.order_id.key_of: 'invoices' is no table",
    ),
    (
        'customer_id = { type = "string", key_of = "customers" }',
        'customer_id = { type = "string", key_of = "orders" }',
        "tables.orders.columns.customer_id.key_of: 'orders' is no table declared before orders",
    ),
    (
        'type = "string"\nkey_of = "orders"',
        'type = "string"',
        "inputs.order_id: a string input gives exactly one of pattern, key_of",
    ),
    (
        'key_of = "orders"',
        'pattern = "ORD-[0-9]{5}"',  # an id of the pattern, but of no order of the instance
        "steps[0] (get_purchase_date).formula: \"lookup(orders, order_id, 'purchase_date')\" "
        "divides by zero or reads no record in 100 of 100 draws",
    ),
    (
        'when = "days_since_purchase > 30"',
        "when = \"days_since_purchase > 30 and order_id < 'ORD-5'\"",
        "'<' compares numbers or two dates, not order_id (a string)",
    ),
    (
        'formula = "days_between(purchase_date, request_date)"',
        'formula = "days_between(purchase_date, amount_typo)"',
        "steps[1] (count_days).formula",
    ),
    (
        'formula = "days_between(purchase_date, request_date)"',
        "formula = \"days_between(purchase_date, date('2026-02-30'))\"",
        "date() takes a date in quotes, ISO text",
    ),
    (
        "formula = \"lookup(orders, order_id, 'amount')\"",
        "formula = \"lookup(orders, request_date, 'amount')\"",
        "the key of table orders is a string (an id), not request_date (a date)",
    ),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD, ids=[m for _, _, m in BAD])
def test_a_bad_id_date_or_drawn_table_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, message: str
) -> None:
    assert old in RETURN_WINDOW
    path = tmp_path / "flow.toml"
    path.write_text(RETURN_WINDOW.replace(old, new, 1), encoding="utf-8")
    out = tmp_path / "suite"
    code = main(["generate", "--workflow", str(path), "--count", "2", "--out", str(out)])
    text, err = capsys.readouterr()
    assert (code, text) == (2, "")
    assert err.startswith(f"agentproc: error: {path}: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()
