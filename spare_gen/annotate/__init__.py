"""`spare-gen annotate`: a local web app where raters compare two corrupted wireframes against the ground truth.

plan (per-rater order, sanity and repeat pairs), store (the append-only answers file), items (what the
browser may see of a pair), server (Starlette routes), static/ (the page and its canvas 3D viewer).
"""
