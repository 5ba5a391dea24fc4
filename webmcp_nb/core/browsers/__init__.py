"""Browsers: instances, their pages and what they do (downloads, live frames, observations, fetches)."""
