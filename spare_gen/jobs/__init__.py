"""The jobs the ``spare-gen`` commands run: regenerate a dataset, build a pool, report, rank, learn, simulate, export."""
