"""Model-free studies of search and runtime mechanisms (the seeds' first, decisive experiments): each runs in seconds
on a CPU, its numbers pinned by a test and written up in docs/findings.md or the mechanism's page (docs/runtime.md
for SoL-Pi's transforms)."""
