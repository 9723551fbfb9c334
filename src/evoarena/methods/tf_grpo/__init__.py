"""`tf_grpo` (Training-Free GRPO): group rollouts → semantic advantage → experience library.

Modules: `method` (the library, its operations, the skill form of the library); templates in `prompts/`. See
docs/methods/tf_grpo.md.
"""

from evoarena.methods.tf_grpo.method import TfGrpo

__all__ = ["TfGrpo"]
