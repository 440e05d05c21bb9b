"""The tools on top of everything (the top floor): the `mlusim` command (cli), the benchmark suites (bench), the
pytest plugin (pytest_plugin) and the job launcher of `mlusim run` (run)."""
