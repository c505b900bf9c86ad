"""The ``check`` command's gate: a run held to its thresholds (errored episodes, least
faithful accuracy, least procedure horizon, forbidden labels) and to no regression
against a baseline run, each condition passed or failed with one line that says why.
"""
