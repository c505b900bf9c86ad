"""Paired comparison of arms run on the same scenarios: each arm's rates, each paired
difference of a rate or of the procedure horizon with its test and interval, the
verdicts, the JSON forms and the comparison's text tables; comparisons that say nothing
refused.
"""
