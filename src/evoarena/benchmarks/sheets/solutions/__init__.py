"""Reference programs, one per family: each is a `solve(input_path, output_path)` that `reference.render_program`
turns into one self-contained file (the parameters and helpers inlined)."""
