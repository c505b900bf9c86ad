"""A report as text and files: its tables and headlines in the terminal (fitted to the
console's width), the per-step table, the replay timeline, the JSON report and the CSV and
parquet tables, and how a share or a p-value reads wherever it is shown.
"""
