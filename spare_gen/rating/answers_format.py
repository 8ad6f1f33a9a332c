"""The answers-file format as text, importable without pandas (``spare-gen annotate --help``, ``rank --help``).

The columns themselves are declared in :mod:`spare_gen.rating.pairs` (ANSWER_COLUMNS,
ANSWER_EXTRA_COLUMNS), whose ANSWERS_FORMAT ends with this text.
"""

ANSWERS_FORMAT = """\
Answers (read by read_answers, `spare-gen rank OUT ANSWERS`): a UTF-8 CSV file, or a folder of
them (every *.csv in it, e.g. OUT/annotations/ written by `spare-gen annotate`), with header
    pair_id,rater_id,choice[,is_repeat,shown_swapped,answered_at,response_ms,position]
one row per judgement; pair_id from pairs.parquet, rater_id any non-empty string, and choice one of
left, right, equal (which side looks closer to the superimposed ground truth), always relative to
the pair's stored left_id/right_id in pairs.parquet, whatever side the tool showed it on.
Optional columns (written by `spare-gen annotate`): is_repeat 0/1 (1 = the rater's second judgement
of the same pair_id: kept for self-consistency, left out of the ranking; missing = 0), shown_swapped
0/1 (the tool showed stored left on the right), answered_at (ISO 8601 UTC), response_ms (time on
the pair), position (index in the rater's session). A rater answers each pair_id at most once with
is_repeat=0 and at most once with is_repeat=1; pool repeat pairs have their own pair_id.
"""
