"""The question stage's orchestration: inputs, plan, fill on Dask, assemble, outputs; ``spare_gen.stages.questions.driver.run_questions``
runs them."""
