"""What the served apps (``spare-gen annotate``, ``spare-gen quiz``) share: the per-server token, JSON 4xx, bounded
JSON bodies, the listening check (http), and answers files that survive a SIGKILL (store)."""
