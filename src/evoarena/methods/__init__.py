"""Evolution methods, one package each (`frozen`, one module), none importing another; beside them what several
share (`prompting`, `jsonparse`, `replies`, `scoring`, `front_matter`, `change_view`). Importing this package
registers them all."""

from evoarena.methods import change_view  # noqa: F401  (registers the "changes" report view: every method's manifests)
from evoarena.methods.ace import Ace
from evoarena.methods.ahe import Ahe
from evoarena.methods.autogenesis import Autogenesis
from evoarena.methods.bootstrap_fewshot import BootstrapFewShot
from evoarena.methods.bpe import BPE
from evoarena.methods.continual_harness import ContinualHarness
from evoarena.methods.dynamic_cheatsheet import DynamicCheatsheet
from evoarena.methods.evoskill import EvoSkill
from evoarena.methods.evotest import EvoTest
from evoarena.methods.frozen import Frozen
from evoarena.methods.gepa import Gepa
from evoarena.methods.hgm import Hgm
from evoarena.methods.history import History
from evoarena.methods.jitrl import JitRLMethod
from evoarena.methods.lib_dspy import BootstrapFewShot as DSPyBootstrapFewShot
from evoarena.methods.lib_dspy import LabeledFewShot as DSPyLabeledFewShot
from evoarena.methods.lib_gepa import GepaOptimize
from evoarena.methods.lib_textgrad import TextGradTGD
from evoarena.methods.meta_harness import MetaHarness
from evoarena.methods.prompting import generator_output, render_prompt
from evoarena.methods.protegi import Protegi
from evoarena.methods.reasoning_bank import ReasoningBank
from evoarena.methods.reference import Reference
from evoarena.methods.reflexion import Reflexion
from evoarena.methods.skillprox import SkillProx
from evoarena.methods.textgrad import TextGrad
from evoarena.methods.tf_grpo import TfGrpo

__all__ = [
    "Ace",
    "Ahe",
    "Autogenesis",
    "BPE",
    "BootstrapFewShot",
    "ContinualHarness",
    "DSPyBootstrapFewShot",
    "DSPyLabeledFewShot",
    "DynamicCheatsheet",
    "EvoSkill",
    "EvoTest",
    "Frozen",
    "Gepa",
    "GepaOptimize",
    "Hgm",
    "History",
    "JitRLMethod",
    "MetaHarness",
    "Protegi",
    "ReasoningBank",
    "Reference",
    "Reflexion",
    "SkillProx",
    "TextGrad",
    "TextGradTGD",
    "TfGrpo",
    "generator_output",
    "render_prompt",
]
