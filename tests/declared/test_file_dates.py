"""Dates and ids given in a table's rows (not drawn), a date literal in a formula, and a
string step passed on: read, drawn and computed as the tools compute them."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentproc.declared.dates import days_between
from agentproc.declared.file import read_workflow
from agentproc.errors import InputError
from agentproc.workflow.declared.suite import workflow_scenarios

FLOW = """
format = 2
description = "Price a late order."
answer = "charge"

[inputs.sku]
type = "category"
choices = ["SKU-A", "SKU-B"]

[inputs.bought]
type = "date"
range = ["2026-03-01", "2026-12-31"]

[inputs.price]
range = [10, 100]

[tables.products]
key = "sku"
columns = { launch = "date", batch = "string" }
rows = [
  { sku = "SKU-A", launch = "2026-02-01", batch = "B-17" },
  { sku = "SKU-B", launch = "2026-01-15", batch = "B-42" },
]

[[steps]]
tool = "get_launch"
output = "launch"
formula = "lookup(products, sku, 'launch')"

[[steps]]
tool = "get_batch"
output = "batch"
formula = "lookup(products, sku, 'batch')"

[[steps]]
tool = "age"
output = "age"
formula = "days_between(launch, bought)"
decimals = 0

[[steps]]
tool = "charge"
output = "charge"
formula = "price * 2 + ifelse(bought < date('2026-06-01') and batch == batch, age, 0)"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "flow.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_dates_and_ids_given_in_rows_are_looked_up_and_counted(tmp_path):
    wf = read_workflow(write(tmp_path, FLOW))
    for s in workflow_scenarios(wf, "flow", count=20, seed=1):
        v = {st.output: st.value for st in s.steps}
        row = {"SKU-A": ("2026-02-01", "B-17"), "SKU-B": ("2026-01-15", "B-42")}[s.inputs["sku"]]
        assert (v["launch"], v["batch"]) == row
        assert v["age"] == days_between(row[0], s.inputs["bought"])
        early = s.inputs["bought"] < "2026-06-01"
        assert v["charge"] == pytest.approx(s.inputs["price"] * 2 + (v["age"] if early else 0))


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        ('launch = "2026-02-01"', 'launch = "2026-2-1"', "rows[0].launch", "not an ISO date"),
        ('batch = "B-42"', "batch = 42", "rows[1].batch", "42.0 is not a name"),
        ('answer = "charge"', 'answer = "batch"', "answer", "is not the last step's output"),
    ],
)
def test_a_bad_date_or_id_in_a_row_names_its_field(tmp_path, old, new, field, message):
    with pytest.raises(InputError) as info:
        read_workflow(write(tmp_path, FLOW.replace(old, new)))
    assert field in str(info.value) and message in str(info.value)


def test_a_string_or_date_answer_is_refused(tmp_path):
    text = FLOW.replace('answer = "charge"', 'answer = "last"') + (
        '\n[[steps]]\ntool = "last"\noutput = "last"\nformula = "ifelse(age > 400, batch, batch)"\n'
    )
    with pytest.raises(InputError) as info:
        read_workflow(write(tmp_path, text))
    assert "answer: the answer is a number, a category or a boolean, not a string" in str(
        info.value
    )
