"""How an attempt is made: `solver_prompt` builds the solver's messages from a harness, `solve` runs one single-turn
attempt (or a `harness_program`), `episode_solve`/`episode_context` run an interactive episode."""
