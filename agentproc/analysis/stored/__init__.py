"""Stored runs read again without a model: replay (re-execute the recorded calls on fresh
mock tools and label them) and relabel (label a run file again with the current monitor).
"""
