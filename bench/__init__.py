"""Benchmarks run by `make bench`. Each prints its figure beside a baseline measured in the
same run; results with the machine are recorded in docs/BENCHMARKS.md."""
