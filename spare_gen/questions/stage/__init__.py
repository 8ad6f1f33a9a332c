"""The question stage's orchestration: inputs, plan, fill on Dask, assemble, outputs; ``driver.run_questions``."""
