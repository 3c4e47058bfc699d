"""The exact solver: probability propagated through the per-state hit tables."""
