"""A run and its cells: `runner` plans and runs cells (in threads or on Ray), `cell_work` builds one cell, `cell` drives
the benchmark's schedule (`schedules`: practice-select-test, curriculum), `units` does and commits each unit it yields,
`step_service` answers the method's requests, `evaluate`/`grading` score attempts, `probes` checks roles, `reporting`
writes the end-of-run report."""
