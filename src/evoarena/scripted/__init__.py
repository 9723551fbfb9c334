"""Scripted model policies: deterministic Python players of a benchmark's roles, for mechanism tests
(evidence: mechanism). They sit above methods and benchmarks, so they may read both; importing this package
registers them all."""

from evoarena.scripted import (
    arith,
    bpe_household,
    continual_maze,
    echo,
    evotest_maze,
    grpo_groups,
    humaneval_repair,
    jitrl_maze,
    jitrl_textworld,
    labels_learner,
    protegi_roles,
    tool_proposer,
)
from evoarena.scripted.clr import student as clr_student
from evoarena.scripted.sheets import student as sheets_student

__all__ = ["arith", "bpe_household", "clr_student", "continual_maze", "echo", "evotest_maze", "grpo_groups",
           "humaneval_repair", "jitrl_maze", "jitrl_textworld", "labels_learner", "protegi_roles",
           "sheets_student", "tool_proposer"]
