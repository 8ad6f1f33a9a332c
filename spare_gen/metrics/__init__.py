"""Wireframe and pose metrics and their property tests. This package's opening imports nothing heavy: it declares
the one figure the command line's help shows without loading a metric."""

RECOMMENDED_MODELS = 64  # below this many wireframes many verdicts are not stable (see the report's intervals)
