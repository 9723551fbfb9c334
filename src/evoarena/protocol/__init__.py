"""The protocol: how a run is carried out under evoarena's rules (splits, budgets, ledger, locked test).

Four rooms, each a floor above the one it leans on, over shared leaves kept here:
- `run/` — the run and its cells: runner, cell work and the cell loop, the step service that answers a method's
  requests, evaluation, grading, probes, the end-of-run report, and the Ray executor;
- `boundary/` — the method's side of the boundary: the context a method holds, the channel, and the method's own
  process (`isolation: process`) with its child;
- `solve/` — how an attempt is made: the solver's request, harness programs, episode solving;
- `export/` — a harness version out of a run: solver prompt file, files, Agent Skill folder.
Leaves: `catalog` (registries), `validate`, `confinement`, `roles`, `budget`, `scheduler`, `splits`, `progress`
(with `progress_eta` and `progress_log`).

Nothing is re-exported here: import from the module that owns a name (the public face is `evoarena`).
"""
