"""The pool stage: ground-truth wireframes extracted from B-reps, corruptions, pictures and rater pairs."""
