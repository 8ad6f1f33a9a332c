"""`spare-gen quiz`: a local web app that serves a dataset's multiple-choice questions to people, with SPARE3D's two
protocols (untrained: a few test questions per task, no feedback; trained: a training phase with feedback, then
timed test questions), and simulated people for dry runs.

bank (the questions and their drawings, as the browser may see them), plan (a person's fixed question order),
answers (the answers file), session (what a person has answered, what comes next, time limits), server
(Starlette routes), simulate (simulated people, offline or against a running server), static/ (the page).
"""
