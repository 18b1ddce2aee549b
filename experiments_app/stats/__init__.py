"""Experiment statistics, pure numpy/scipy (never Django): the A/B readout from rollups.

Entry points: :func:`experiments_app.stats.readout.metric_readout` and
:func:`experiments_app.stats.readout.srm_check`, fed with
:class:`experiments_app.stats.samples.SampleStats` (sufficient statistics per arm).
Modules: samples, mean_effects (Welch / delta / Fieller), ratio_metrics (cluster units),
cuped, srm, sequential (asymptotic confidence sequences), daily (per-day effects, Cochran's Q,
cumulative series), multiple_testing (Holm / BH), power (MDE, sample size), estimators (which
estimator a metric uses), simulation (traffic generator with a known true lift).
Formulas, references and test tolerances: docs/STATISTICS.md.
"""
