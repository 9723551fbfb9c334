"""A harness version out of a run: `bundle` (`evoarena export`: prompt, files or skill), `prompt_file` (the saved
solver prompt and `load_prompt`), `skill_folder` (an Agent Skills folder)."""
