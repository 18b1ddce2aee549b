"""Pure-Python scorers: QA judge, harness-variant, IFEval, BFCL. Arrives with the
evaluation milestone."""
