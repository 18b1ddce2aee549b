"""Pure-Python offline evaluation (no Django): the IFEval and BFCL scorers, Live-Stream QA
and Harness-Variant QA sets with their runner and scoring, the statistics and the score
table, and batched local generation. See docs/EVALUATION.md."""
