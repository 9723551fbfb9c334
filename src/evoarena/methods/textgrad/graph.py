"""TextGrad's computation graph, written natively: text variables (value, role description, predecessors, the
feedback they received), the two operations prompt optimisation uses — an LLM call and a string-based loss — and a
backward pass that sends each operation's critique request to the backward engine and hands the critique to the
variable it concerns, downstream first, so an upstream variable's feedback carries the downstream feedback as context.

The request texts are textgrad's own templates (files in `prompts/`, each naming the textgrad function it mirrors);
`tests/conformance/test_textgrad_native.py` renders them next to the `textgrad` package's for the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from evoarena.methods.prompting import render_prompt

TAGS = ("<IMPROVED_VARIABLE>", "</IMPROVED_VARIABLE>")
"""TextualGradientDescent's default `new_variable_tags`."""
RESPONSE_ROLE = "response from the language model"
"""textgrad.defaults.VARIABLE_OUTPUT_DEFAULT_ROLE: the role of an LLM call's response."""

Request = tuple[str, str]
"""One backward-engine request: (system prompt, user prompt)."""
Engine = Callable[[Sequence[Request]], list[str | None]]
"""The backward engine: requests answered in one batch, in order; None where no reply came (a provider error)."""


@dataclass(eq=False)
class Gradient:
    """A critique of a variable and the conversation it was computed in (textgrad's `gradients_context`)."""

    value: str
    system_prompt: str = ""
    prompt: str = ""
    response_value: str = ""
    response_desc: str = ""
    in_conversation: bool = False


@dataclass(eq=False)
class Variable:
    """A text variable: its value, role description, whether it is optimised, and the operation that made it."""

    value: str
    role: str
    requires_grad: bool = False
    op: Op | None = None
    gradients: list[Gradient] = field(default_factory=list)

    @property
    def predecessors(self) -> tuple[Variable, ...]:
        return self.op.inputs if self.op is not None else ()

    def gradient_text(self) -> str:
        """`Variable.get_gradient_text`: the critiques received, one a line."""
        return "\n".join(g.value for g in self.gradients)

    def short(self, n_words_offset: int = 10) -> str:
        """`Variable.get_short_value`: the first and last ten words around `(...)` when longer than twenty."""
        words = self.value.split(" ")
        if len(words) <= 2 * n_words_offset:
            return self.value
        return " ".join(words[:n_words_offset]) + " (...) " + " ".join(words[-n_words_offset:])


@dataclass(eq=False)
class Op:
    """An operation's record: its inputs (the output's predecessors) and what the backward request shows."""

    inputs: tuple[Variable, ...]
    system_prompt: str = ""
    prompt: str = ""
    purpose: str = ""
    named: tuple[tuple[str, Variable], ...] = ()
    kind: str = "llm"


def llm_call(system_prompt: Variable, inputs: Sequence[Variable], prompt: str, response: str) -> Variable:
    """`LLMCall.forward` (a `FormattedLLMCall` when several inputs are formatted into `prompt`): the response
    variable, whose predecessors are the system prompt and the inputs. The reply is made by the cell's rollout."""
    op = Op((system_prompt, *inputs), system_prompt=system_prompt.value, prompt=prompt)
    return Variable(response, RESPONSE_ROLE, requires_grad=True, op=op)


def string_loss(inputs: Sequence[tuple[str, Variable]], purpose: str, value: str) -> Variable:
    """`StringBasedFunction.forward`: the loss variable over named inputs (prediction, ground truth answer)."""
    op = Op(tuple(v for _, v in inputs), purpose=purpose, named=tuple(inputs), kind="string")
    return Variable(value, f"Output of the string-based function with purpose: {purpose}", op=op)


def _request(node: Variable, target: Variable) -> str:
    """The backward prompt for `target`, an input of `node`'s operation: `node`'s gradient picks the chain template
    (its critique in the objective) or the base one (an evaluation with no downstream critique), as textgrad does."""
    op = node.op
    assert op is not None
    if op.kind == "string":
        inputs = "\n\n".join(f"**{k.replace('_', ' ').capitalize()}(role: {v.role})**: {v.short()}"
                             for k, v in op.named)
        return render_prompt(__package__, "loss_backward", variable_desc=target.role, function_purpose=op.purpose,
                             inputs_string=inputs, response_value=node.value, variable_short=target.short())
    name = "llm_backward_base" if node.gradient_text() == "" else "llm_backward"
    return render_prompt(__package__, name, variable_desc=target.role, system_prompt=op.system_prompt,
                         prompt=op.prompt, response_value=node.value, response_desc=node.role,
                         response_gradient=node.gradient_text(), variable_short=target.short())


def _levels(losses: Sequence[Variable]) -> list[list[Variable]]:
    """The graph's operation outputs, by distance from the losses: every output at level n has all its successors
    at levels < n, so its gradient is complete when its level runs (textgrad walks a reversed topological order)."""
    depth: dict[int, int] = {}
    nodes: dict[int, Variable] = {}

    def visit(v: Variable, d: int) -> None:
        if v.op is None:
            return
        if depth.get(id(v), -1) < d:
            depth[id(v)], nodes[id(v)] = d, v
            for p in v.predecessors:
                visit(p, d + 1)

    for loss in reversed(losses):
        visit(loss, 0)
    if not depth:
        return []
    levels: list[list[Variable]] = [[] for _ in range(max(depth.values()) + 1)]
    for key, d in depth.items():
        levels[d].append(nodes[key])
    return levels


def backward(losses: Sequence[Variable], engine: Engine) -> bool:
    """`tg.sum(losses).backward(engine)`: the sum passes each loss an empty gradient (its backward is the identity),
    then every operation, downstream first, asks the engine for a critique of each input that requires a gradient.
    A level's requests go in one batch (they do not depend on each other). False when a reply was missing."""
    system = render_prompt(__package__, "backward_system")
    for level in _levels(losses):
        jobs = [(node, target) for node in level for target in node.predecessors if target.requires_grad]
        replies = engine([(system, _request(node, target)) for node, target in jobs])
        for (node, target), reply in zip(jobs, replies, strict=True):
            if reply is None:
                return False
            op = node.op
            assert op is not None
            target.gradients.append(Gradient(reply, op.system_prompt, op.prompt, node.value, node.role,
                                             in_conversation=op.kind == "llm"))
    return True


def gradient_context(variable: Variable) -> str:
    """`get_gradient_and_context_text`: each critique inside the conversation it was computed in, joined by lines."""
    parts = []
    for g in variable.gradients:
        if not g.in_conversation:
            parts.append(g.value)
            continue
        parts.append(render_prompt(__package__, "gradient", system_prompt=g.system_prompt, prompt=g.prompt,
                                   response_value=g.response_value, response_desc=g.response_desc,
                                   variable_desc=variable.role, feedback=g.value))
    return "\n".join(parts)


def update_request(variable: Variable, context: str, constraints: Sequence[str] = ()) -> Request:
    """TextualGradientDescent's `_update_prompt` and its system prompt (no gradient memory, no in-context examples)."""
    system = render_prompt(__package__, "optimizer_system", new_variable_start_tag=TAGS[0],
                           new_variable_end_tag=TAGS[1])
    user = render_prompt(__package__, "update", variable_desc=variable.role, variable_short=variable.short(),
                         variable_grad=context, constraint_text="\n".join(constraints),
                         new_variable_start_tag=TAGS[0], new_variable_end_tag=TAGS[1])
    return system, user


def parse_update(text: str) -> str | None:
    """TextualGradientDescent.step's parse: the text between the tags, stripped; None where the tag is missing
    (textgrad raises IndexError)."""
    parts = text.split(TAGS[0])
    if len(parts) < 2:
        return None
    return parts[1].split(TAGS[1])[0].strip()
