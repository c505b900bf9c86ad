"""The declared workflow format: the file and its models, its checks, the formula grammar
(its tree, types, values and proofs), inputs, tables and ids, lists and loops, seeded
instances, the rules each keeps and a branched instance's path. Knows nothing of tools;
:mod:`agentproc.workflow.declared.compile` compiles an instance into the runtime's scenario.

Import the modules themselves (``from agentproc.declared.file import read_workflow``):
this package re-exports nothing, so that its modules can import each other through it."""
