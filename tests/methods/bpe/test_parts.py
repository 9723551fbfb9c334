"""BPE's parts on their own (evidence: mechanism): the rule-based belief on real tw-household text and ALFWorld's
wording, goals and families, the experience bank (top-3 keyword recall raising usage, LFU eviction at the cap), the
progress cap, the consolidator's strict reply parsing and rules, and the pollution measure."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evoarena.methods.bpe.agent import STATUSES, Progress
from evoarena.methods.bpe.belief import HAND, Belief, replay
from evoarena.methods.bpe.consolidate import ConsolidationError, Op, apply_ops, parse_ops, rule_ops
from evoarena.methods.bpe.evidence import check_prior, pollution, update_evidence
from evoarena.methods.bpe.experience import Bank, location_prior, tokens
from evoarena.methods.bpe.goal import family, goal

HOUSEHOLD = ["pick", "look", "clean", "heat", "cool", "pick-two"]
SEED_ENTRY = {"store": "general", "text": "In a maze, keep heading east and south towards the exit."}


# -- the belief on real tw-household text --------------------------------------------------------------------------
def test_the_belief_parser_follows_a_real_household_game(games: Path) -> None:
    from evoarena.envs.textworld import TextWorldEnv

    env = TextWorldEnv("tw-household", {"task": "heat", "objects": 3})
    try:
        first = env.reset(3)
        belief = Belief()
        belief.observe(None, first)
        plan = env.policy()
        take = next(c for c in plan if c.startswith("take "))
        thing, source = take.removeprefix("take ").split(" from ")
        assert belief.room == "Room" and "sink basin" in belief.receptacles and "microwave" in belief.receptacles
        steps = []
        for command in ["open cabinet", "close cabinet", *plan[:plan.index(take) + 1], "inventory", *plan[plan.index(
                take) + 1:]]:
            before = dict(belief.where)
            text = env.step(command).observation
            steps.append(("env", command, text))
            belief.observe(command, text)
            if command == "open cabinet" and "You open the cabinet" in text:
                assert belief.opened["cabinet"] is True and "cabinet" in belief.looked
            if command == "close cabinet" and "You close" in text:
                assert belief.opened["cabinet"] is False
            if command == take:
                assert belief.where[thing] == HAND and belief.held == [thing] and before.get(thing) == source
            if command.startswith("heat "):
                assert "hot" in belief.states[thing] and "hot" in belief.describe(thing)
        goal_place = plan[-1].split(" on " if " on " in plan[-1] else " into ")[-1]
        assert belief.first_seen[thing] == source and belief.where[thing] == goal_place
        assert env.won and re.search(rf"{goal_place}: [^;\n]*\b{thing}\b", belief.world())
        assert replay(first, steps).facts() == belief.facts()  # the trace alone gives the same evidence
    finally:
        env.close()


def test_the_belief_reads_alfworld_wording_too() -> None:
    b = Belief()
    b.observe(None, "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around "
                    "you, you see a cabinet 1, a countertop 1, a fridge 1.\n\nYour task is to: put a cool mug in "
                    "cabinet.")
    b.observe("go to countertop 1", "You arrive at countertop 1. On the countertop 1, you see a apple 1, and a mug 2.")
    b.observe("take mug 2 from countertop 1", "You pick up the mug 2 from the countertop 1.")
    b.observe("open fridge 1", "You open the fridge 1. The fridge 1 is open. In it, you see a egg 1.")
    b.observe("cool mug 2 with fridge 1", "You cool the mug 2 using the fridge 1.")
    assert b.room is None and b.at == "countertop 1" and b.opened == {"fridge 1": True}
    assert b.where == {"apple 1": "countertop 1", "mug 2": HAND, "egg 1": "fridge 1"} and b.states["mug 2"] == ["cool"]
    assert b.first_seen["mug 2"] == "countertop 1" and b.looked == ["countertop 1", "fridge 1"]
    assert "cabinet 1" in b.world() and check_prior("mug", "countertop", b.facts()) == "hit"


def test_goals_and_families() -> None:
    assert goal("Your task is to: put a hot mug on the dining table.\n\n-= Room =-").kind == "heat"
    g = goal("Your task is to: put two soap bars in the cabinet.")
    assert (g.kind, g.thing, g.place) == ("pick-two", "soap bar", "cabinet")
    assert goal("Your task is to: look at the cellphone under the desk lamp.").thing == "cellphone"
    assert goal("Your task is to: heat some egg and put it in garbagecan 1.").kind == "heat"
    assert goal("Your task is to: put a book on the shelf.").kind == "pick" and goal("go east").kind is None
    assert family("tw-household/pick-two-55") == "pick-two" and family("maze-7") == "maze"


# -- the experience bank -------------------------------------------------------------------------------------------
def test_recall_is_keyword_top3_per_store_and_raises_usage() -> None:
    bank = Bank()
    texts = ["heat the mug with the microwave", "the mug goes in the microwave to heat", "microwave heats food",
             "heat anything with the microwave", "cool things in the fridge"]
    for t in texts:
        bank.add("task", t, 1)
    bank.add("search", "The mug is usually in the cabinet.", 1)
    found = bank.recall("heat mug microwave")
    assert [e.text for e in found["task"]] == texts[:3]  # 3 shared keywords, 3, then 2 (the older of two)
    assert [e.id for e in found["search"]] == ["s1"] and "general" not in found
    assert [e.usage for e in bank.stores["task"]] == [1, 1, 1, 0, 0]
    assert bank.retrieve("fridge")["task"][0].usage == 0 and bank.stores["task"][4].usage == 0  # retrieve: no side
    assert tokens("Two Soap Bars in the boxes") == {"two", "soap", "bar", "box"}


def test_a_full_store_evicts_the_least_used_entry() -> None:
    bank = Bank(cap=80)
    for i in range(80):
        bank.add("mistakes", f"mistake number {i}", i)
    for e in bank.stores["mistakes"]:
        e.usage = 0 if e.id in ("m7", "m30") else 2
    entry, evicted = bank.add("mistakes", "a new one", 81)
    assert evicted is not None and evicted.id == "m7" and len(bank.stores["mistakes"]) == 80  # least used, oldest
    assert entry.id == "m81" and bank.get("m30") is not None
    _, again = bank.add("mistakes", "another", 82)
    assert again is not None and again.id == "m30"  # the other unused one, older than the newcomer
    _, third = bank.add("mistakes", "and another", 83)
    assert third is not None and third.id == "m81"  # then the newcomers (usage 0), oldest first
    bank.remove("m83")
    assert bank.add("mistakes", "no id reuse", 84)[0].id == "m84"
    assert location_prior("The mug was found in/on the cabinet.") == ("mug", "cabinet")
    assert location_prior("Always open containers first") is None


def test_progress_holds_at_most_its_cap() -> None:
    progress = Progress(8)
    answers = [progress.commit(f"subgoal {i}: todo") for i in range(10)]
    assert len(progress.items) == 8 and all("Nothing committed" in a for a in answers[8:])
    assert "-> tried" in progress.commit("subgoal 3: tried") and progress.items[3] == ["subgoal 3", "tried"]
    assert "must be one of" in progress.commit("subgoal 1: done") and STATUSES == ("tried", "todo", "blocked")



# -- consolidation and evidence on their own ---------------------------------------------------------------------
def test_the_consolidator_reply_is_parsed_strictly() -> None:
    assert parse_ops("NONE") == []
    ops = parse_ops("```\n- ADD search: The mug is in the cabinet.\n2. UPDATE [g3]: new text\nREMOVE m1\n```")
    assert ops == [Op("add", "search", "The mug is in the cabinet."), Op("update", "g3", "new text"),
                   Op("remove", "m1")]
    assert parse_ops("ADD common mistakes: do not loop")[0].target == "mistakes"
    for bad in ("", "ADD: no store", "ADD recipes: x", "UPDATE g1 new text", "REMOVE the old one",
                "Here you go:\nADD general: x", "NONE\nADD general: x"):
        with pytest.raises(ConsolidationError):
            parse_ops(bad)


def test_rules_add_update_and_remove() -> None:
    bank = Bank()
    bank.add("search", "The mug is in the cabinet.", 1)  # s1, wrong below
    bank.add("search", "The apple is in the fridge.", 1)  # s2, contradicted, apple not seen
    bank.add("general", "Always look under the sofa.", 1)  # g1, recalled in two failed episodes
    evidence: dict[str, dict[str, int]] = {}
    won = {"won": True, "task_type": "heat", "thing": "mug", "first_seen": {"mug": "countertop"},
           "looked": ["countertop", "fridge"], "recalled": ["g1"], "notes": ["heat before placing"],
           "effective": ["take mug from countertop", "heat mug with microwave"], "actions": [], "stopped": "done"}
    lost = {"won": False, "task_type": "pick", "thing": "book", "first_seen": {}, "looked": [], "recalled": ["g1"],
            "notes": [], "effective": [], "actions": ["look"] * 5, "stopped": "budget"}
    won["checks"] = update_evidence(evidence, bank.entries(), won)
    assert [(c["id"], c["result"]) for c in won["checks"]] == [("s1", "miss"), ("s2", "miss")]
    update_evidence(evidence, bank.entries(), lost)
    update_evidence(evidence, bank.entries(), lost)
    ops = rule_ops(bank, [won, lost], evidence)
    assert Op("update", "s1", "The mug was found in/on the countertop.") in ops and Op("remove", "s2") in ops
    assert Op("add", "task", "[heat] heat before placing") in ops and Op("remove", "g1") not in ops  # won once
    assert any(o.kind == "add" and o.target == "mistakes" and "'look' 5 times" in o.text for o in ops)
    evidence["g1"] = {**evidence["g1"], "recalled_won": 0}
    assert Op("remove", "g1") in rule_ops(bank, [], evidence)
    done, refused = apply_ops(bank, ops, 3, source="rule", max_ops=8, evidence=evidence)
    assert apply_ops(bank, [Op("add", "general", "Check <place> first")], 3, source="model", max_ops=8,
                     evidence=evidence)[1][0][1].startswith("the text holds a placeholder")
    assert not refused and evidence["s1"]["checks"] == 0 and bank.get("s1").location == "countertop"  # type: ignore[union-attr]


def test_pollution_flags_wrong_priors_and_entries_only_failed_episodes_used() -> None:
    bank = Bank()
    bank.add("search", "The mug is in the cabinet.", 0)  # s1: right once, wrong twice -> polluted
    bank.add("search", "The pen is on the desk.", 0)  # s2: right -> clean
    bank.add("task", "heat things in the microwave", 0)  # t1: recalled in a failed episode only -> suspect
    bank.add("general", "never recalled", 0)  # g1: no evidence
    evidence: dict[str, dict[str, int]] = {}
    records = [{"won": True, "first_seen": {"mug": "cabinet", "pen": "desk"}, "looked": [], "recalled": []},
               {"won": False, "first_seen": {"red mug": "shelf"}, "looked": [], "recalled": ["t1"]},
               {"won": False, "first_seen": {}, "looked": ["cabinet"], "recalled": []}]
    for r in records:
        update_evidence(evidence, bank.entries(), r)
    assert evidence["s1"] == {"recalled_won": 0, "recalled_failed": 0, "checks": 3, "hits": 1, "misses": 2}
    view = pollution(bank.entries(), evidence)
    assert view["polluted_ids"] == ["s1"] and view["suspect_ids"] == ["t1"]
    assert (view["judged"], view["flagged"], view["rate"], view["unjudged"]) == (3, 2, 2 / 3, 1)
    assert view["location_rate"] == 0.5 and view["suspect_rate"] == 1.0
