"""Bias audit of the multiple-choice tasks: question-blind probes that should score at chance."""
