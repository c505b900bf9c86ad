"""What a group of episodes shows: its cells and tallies, per-step measures, trials,
tokens, the procedure horizon, self-conditioning observed and induced, and the report
that aggregates them by agent (which agent an episode is, a declared workflow's step
names). Built on :mod:`agentproc.analysis.stats`; renders nothing.
"""
