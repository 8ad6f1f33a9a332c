"""Publishing questions: content-named answer-side files and the file manifest, and the contact sheets."""
