"""Where agents already run: an MCP tool server, OpenTelemetry GenAI traces in and out, and
an Inspect AI task. Each needs an optional extra (``[mcp]``, ``[otel]``, ``[inspect]``),
imported only by the module that uses it; every one labels calls through the same
:class:`~agentproc.runs.EpisodeSession` (or replay) and writes through the same
:class:`~agentproc.runs.RunWriter` as ``run``."""
