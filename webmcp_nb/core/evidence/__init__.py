"""Evidence: what the pages of an instance did, its failure context, and its exports (HAR, traces)."""
