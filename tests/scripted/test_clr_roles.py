"""The scripted exception-lister in every method's update roles (evidence: mechanism): each role's reply to its own
rendered template, fed real CLR feedback, passes that method's parser and carries the revealed members; the
solver then excludes them from whatever state the method shows it."""

from __future__ import annotations

from clr_role_cases import ask, assert_solver_excludes, case, excluded_by, rendered_templates, solve

from evoarena.models import GenParams, Message
from evoarena.scripted.clr.membership import RULE, revealed_members, stated_members
from evoarena.scripted.clr.roles import ROLE_POLICIES, recognise
from evoarena.scripted.clr.student import attribute, clr_student


def test_a_sampled_lister_sometimes_adds_one_look_alike_guess() -> None:
    c = case()
    msgs = [Message("system", c.system), Message("user", c.task)]
    assert clr_student(msgs, GenParams(temperature=0.0, seed=5)) == c.program  # greedy: the plain lister
    base = excluded_by(c.program)
    examples = {m.group("field"): attribute(m.group("example")) for m in RULE.finditer(c.task)}
    guesses = []
    for seed in range(40):
        program = clr_student(msgs, GenParams(temperature=0.7, seed=seed))
        assert program == clr_student(msgs, GenParams(temperature=0.7, seed=seed))  # seeded: reproducible
        extra = [(f, v) for f, vals in excluded_by(program).items() for v in vals - base.get(f, set())]
        assert len(extra) <= 1 and all(set(vals) >= base[f] for f, vals in excluded_by(program).items())
        guesses += extra
    assert 5 <= len(guesses) <= 35  # about half the draws guess
    assert all(attribute(v) == examples[f] for f, v in guesses)  # a look-alike of that rule's example


def test_values_are_resolved_whatever_surrounds_them() -> None:
    text = (
        '"key_insight": "CWE-79: Cross-site Scripting belongs to control list X7."\n'
        "[com-00001] helpful=0 harmful=0 :: Washington, D.C. belongs to sales region F7.\n"
        "## Content Thai Airways International belongs to review queue A4. Lufthansa belongs to review queue A4.\n"
        "A record is in review queue A4 when its airline belongs to review queue A4; for example, "
        "British Airways belongs to review queue A4.\n"
        "British Airways belongs to review queue A4 wherever it appears; records with this value are not counted.\n"
        "Qantas does not belong to review queue A4, unlike British Airways; records with this value are counted.\n"
    )
    stated = stated_members(text)
    assert stated[:4] == [("CWE-79: Cross-site Scripting", "control list X7"), ("Washington, D.C.", "sales region F7"),
                          ("Thai Airways International", "review queue A4"), ("Lufthansa", "review queue A4")]
    assert ("British Airways", "review queue A4") in stated  # the moved example: the solver excludes it anyway
    assert ("British Airways", "review queue A4") not in revealed_members(text) and len(revealed_members(text)) == 4


def test_the_solver_excludes_stated_members_and_nothing_else() -> None:
    c = case()
    assert_solver_excludes(c.feedback, c.members)
    assert "does not belong" in c.feedback
    bare = solve(c.task, c.system)
    assert all(repr(v) not in bare for v, _ in c.members)


def test_every_update_template_is_recognised_as_its_own_role_and_the_solver_as_none() -> None:
    prompts = rendered_templates()
    assert set(prompts) == {(p.method, p.role) for p in ROLE_POLICIES}
    for key, prompt in prompts.items():
        assert sum(" ".join(p.phrase.split()) in " ".join(prompt.split()) for p in ROLE_POLICIES) == 1, key
        policy = recognise(prompt)
        assert policy is not None and (policy.method, policy.role) == key
        reply = ask(prompt)
        assert recognise(reply) is None, key  # a state built from replies never looks like an update prompt
    assert recognise(case().task) is None
