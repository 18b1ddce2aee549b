"""Experiment statistics (pure numpy/scipy): effect sizes, CIs, SRM, CUPED, sequential
tests, power. Arrives with the A/B experiments milestone."""
