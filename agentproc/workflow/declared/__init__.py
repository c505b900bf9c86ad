"""A declared workflow's instance compiled into the runtime's :class:`Scenario`: the
scenario itself and the file's JSON Schema (``compile.py``), its steps as a variant shows
them (``view.py``), a loop's steps sharing one tool (``loops.py``), its drawn records
(``records.py``), its steps checked once per structure (``checks.py``), a branched
instance's path and conditions (``branching.py``), arguments checked by type
(``typed_args.py``), a multi-field answer's finish tool (``answer_fields.py``) and a suite
on disk (``suite.py``). Re-exports nothing: the runtime's modules import these and they
import the runtime's."""
