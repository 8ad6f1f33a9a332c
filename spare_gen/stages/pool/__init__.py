"""The pool stage: ground-truth wireframes extracted from B-reps, corrupted variants, pictures and rater pairs."""
