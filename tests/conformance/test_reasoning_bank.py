"""ReasoningBank against its released code (`google-research/reasoning-bank` @ed80611), as summarised in
/work/shared/reference/methods-as-released.md §3 (lines 55-64). Each test names the line it checks."""

from __future__ import annotations

from evoarena.methods.prompting import render_prompt
from evoarena.methods.reasoning_bank.method import (
    PROMPTS,
    BankRow,
    MemoryItem,
    ReasoningBank,
    parse_items,
    parse_judge,
)

PKG = "evoarena.methods.reasoning_bank"
ITEM = "# Memory Item {n}\n## Title T{n}\n## Description D{n}\n## Content C{n}\n"


def test_released_defaults_top_1_three_items_temperature_1() -> None:
    """methods-as-released.md §3 l.59 ("top n = 1 past task"), l.57 ("up to 3 markdown blocks") and l.63
    ("at most 3 non-overlapping ... items ...; temperature 1.0")."""
    p = ReasoningBank.Params()
    assert (p.top_n, p.max_items, p.temperature) == (1, 3, 1.0)


def test_at_most_max_items_blocks_of_title_description_content_are_kept() -> None:
    """methods-as-released.md §3 l.57: "memory_items are up to 3 markdown blocks (Title / Description / Content)"."""
    items, _ = parse_items("".join(ITEM.format(n=n) for n in range(1, 6)), 3)
    assert items == [MemoryItem(f"T{n}", f"D{n}", f"C{n}") for n in (1, 2, 3)]
    assert parse_items("# Memory Item 1\n## Title only a title\n", 3)[0] is None


def test_the_judge_is_strict_and_never_sees_a_reference() -> None:
    """methods-as-released.md §3 l.61: the judge sees the trajectory and final message; "strict: if uncertain
    answer failure"."""
    text = render_prompt(PKG, "judge", query="Q", output="OUT")
    assert "if you are uncertain, answer failure" in text
    assert "do not have the reference answer" in text
    assert parse_judge('Thoughts: fine\nStatus: "success"') == "success"
    assert parse_judge("Thoughts: not sure") is None  # the method counts this as failure


def test_success_and_failure_have_their_own_induction_prompts() -> None:
    """methods-as-released.md §3 l.62-63: "success prompt → why it succeeded; failure prompt → why it failed and how
    to prevent; at most 3 non-overlapping, concrete, reusable items without task-specific literals"."""
    assert PROMPTS == {"success": "induce_success", "failure": "induce_failure"}
    ok = render_prompt(PKG, PROMPTS["success"], query="Q", output="O")
    bad = render_prompt(PKG, PROMPTS["failure"], query="Q", output="O")
    assert "why the trajectory succeeded" in ok and "why the trajectory failed" in bad
    assert "prevent the same failure" in bad
    for text in (ok, bad):
        assert "at most 3 memory items" in text and "must not overlap" in text
        assert "not this task's specific numbers, names or answers" in text


def test_retrieval_keys_on_past_queries_and_shows_all_items_of_the_top_record(tmp_path: object) -> None:
    """methods-as-released.md §3 l.59-60: "Retrieval key = past task QUERIES (not memory text) ... top n = 1 past
    task; concatenate all its memory items" into the prompt ("past experience; use if relevant")."""
    def row(task_id: str, query: str, titles: list[str]) -> str:
        items = [MemoryItem(t, "d", "c") for t in titles]
        return BankRow(task_id=task_id, query=query, trajectory="", status="success", memory_items=items,
                       grader_passed=True).line()

    # the far record's memory text matches the new query; its query does not
    bank = (row("a", "sort the list of numbers", ["ALPHA", "BETA"])
            + row("b", "unrelated words", ["sort the list of numbers please"]))
    task = type("T", (), {"prompt": "sort the list of numbers please", "id": "t"})()
    text = ReasoningBank(retriever="lexical").context({"memory/reasoning_bank.jsonl": bank}, task)  # type: ignore[arg-type]
    assert "PAST EXPERIENCE" in text and "use them if relevant" in text
    assert "ALPHA" in text and "BETA" in text and "please" not in text
