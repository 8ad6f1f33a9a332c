"""Dataset plumbing: tables as folders of Parquet parts (``shards``), drawings packed into Parquet (``packed``), what
a dataset folder holds (``inventory``), ``dataset.json`` and ``run.json`` (``manifest``), and the output-folder check
before any work (``preflight``).
"""
