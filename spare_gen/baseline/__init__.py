"""A small CNN trained from scratch on the multiple-choice tasks: a sanity baseline for generated datasets (torch extra)."""
