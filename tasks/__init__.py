"""Task types: one subpackage per task, each exporting TASK and BENCHMARKS."""
