"""Harness-State Augmentation (pure Python): task-preserving transforms of a Harness and
gold-trajectory remapping. Arrives with the HSA milestone."""
