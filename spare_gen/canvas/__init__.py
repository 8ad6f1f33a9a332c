"""The canvas every picture is drawn on: the 11 SPARE3D poses and their orthographic cameras (``poses``), SVG
documents with stable bytes (``svg``) and their rasterisation (``raster``). A library below the stages: the drawings
stage, the pool's rater pictures (``spare_gen.rating.pictures``), the viewer, the loaders and the exports draw
with it. It imports no other spare_gen package.
"""
