# tests/perf holds the benchmark (python tests/perf/bench.py) and its data generator: not tests.
collect_ignore = ["bench.py", "gen_logs.py", "gen_job_logs.py"]
