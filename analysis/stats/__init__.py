"""Statistics as pure numpy/scipy functions: means with instance-clustered CIs, bootstrap
weights, paired comparisons, and the agreement statistics. No store, no I/O (an import-linter
contract keeps it so), so each is checked against an independent implementation in tests."""
