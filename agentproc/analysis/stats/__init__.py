"""Pure statistics: binomial intervals, Student's t, clustered sums, paired tests,
multiplicity, survival and the horizon's complementary log-log fit.

Functions of numbers alone (numpy at most): no pydantic, no labelling, and nothing else
of the package, so importing this package or one of its modules loads no model.
"""
