"""A run and its cells: `runner` plans and runs cells (in threads or on Ray), `cell_work` builds one cell, `cell` runs
its practice-select-test loop (`curriculum` the staged one), `step_service` answers the method's requests,
`evaluate`/`grading` score attempts, `probes` checks roles, `reporting` writes the end-of-run report."""
