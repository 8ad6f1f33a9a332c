"""SPARE3D question sets: the five tasks, bias-free by construction.

``tasks/`` holds each task's rule (one module or folder per task, each with its ``TaskSpec``); ``driver`` runs
the stage (``driver.run_questions``) with the orchestration in ``stage/``; ``validate/`` the rules ``spare-gen validate`` checks;
``publish/`` the content-named files, the manifest and the contact sheets. The modules at this level are the
declarations they share: ``schema`` (columns, tables, file names), ``spec``, ``layout``, ``settings``,
``rejections``, ``near_duplicate``, ``select``, ``row_parts``, ``dataset``, ``sheet_cells`` and ``worker`` (a
task's OpenCASCADE work run in the Dask worker's isolated child).
"""
