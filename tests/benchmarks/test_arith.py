import pytest

from evoarena.benchmarks.arith.generator import FAMILIES, family_of, generate
from evoarena.protocol.catalog import build_benchmark
from evoarena.scripted.arith import solve_correctly


def test_generation_is_seeded_and_splits_are_disjoint() -> None:
    a = build_benchmark("arith", {"seed": 3, "n_train": 5, "n_val": 5, "n_test": 10}).build()
    b = build_benchmark("arith", {"seed": 3, "n_train": 5, "n_val": 5, "n_test": 10}).build()
    assert a == b
    assert len({t.prompt for t in a}) == 20
    assert [t.split for t in a].count("test") == 10


def test_every_family_is_recognised_and_its_reference_is_right() -> None:
    for fam in FAMILIES:
        for p in generate(0, 20, [fam]):
            assert family_of(p.question) == fam
            assert solve_correctly(p.question) == p.answer


def test_parse_and_grade() -> None:
    bench = build_benchmark("arith", {"n_train": 1, "n_val": 0, "n_test": 1})
    task = bench.build()[0]
    assert bench.parse(" 42 apples").answer == "42"
    parsed = bench.parse("no idea")
    assert parsed.answer is None and parsed.error
    assert bench.grade(task, task.reference).passed
    assert not bench.grade(task, None).passed


def test_impossible_sizes_fail_clearly_instead_of_looping() -> None:
    with pytest.raises(ValueError, match="distinct problems"):
        generate(0, 500, ["small_sum"])
    with pytest.raises(ValueError, match="families"):
        build_benchmark("arith", {"families": ["calculus"]})


def test_a_worked_reply_is_read_from_its_last_integer_with_room_to_show_the_working() -> None:
    number = build_benchmark("arith", {"n_train": 1, "n_val": 0, "n_test": 1})
    worked = build_benchmark("arith", {"n_train": 1, "n_val": 0, "n_test": 1, "reply": "worked"})
    text = "12 + 5 = 17, then 17 - 3 = 14.\nAnswer: 14"
    assert number.parse(text).answer == "12" and worked.parse(text).answer == "14"
    assert worked.parse("no number").answer is None
    assert number.solver_params().max_tokens == 12 and number.solver_params().stop == ("\n",)
    assert worked.solver_params().max_tokens == 160 and worked.solver_params().stop == ()
    with pytest.raises(ValueError, match="reply"):
        build_benchmark("arith", {"reply": "essay"})
