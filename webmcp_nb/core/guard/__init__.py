"""Guards: secrets kept out of results, and what an attached agent may do (grants, file loads)."""
