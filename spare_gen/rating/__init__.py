"""Wireframe science, beside ``spare_gen.metrics``: corruptions (the registry of corruption kinds and severities),
rater pairs, pictures of wireframes, imported predictions, house wireframe kinds and the calibration of corruptions
against the metrics. The pool stage (``spare_gen.stages.pool``) runs them; the ``Wireframe`` data type itself is the
leaf module ``spare_gen.wireframe``.
"""
