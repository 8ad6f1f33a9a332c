"""A sample viewer: a self-contained HTML page of questions, so a person can check a dataset before training."""
