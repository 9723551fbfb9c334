"""ObservationPack: > 10 KiB outputs sent whole twice, then a stable handle with a ~1 KiB head/tail excerpt; exact
paged recall by handle (fixed pages of characters, the last short, out of range refused); nothing lost at page
boundaries, ASCII or not; stats of bytes sent vs raw."""

from __future__ import annotations

import hashlib

import pytest

from evoarena.runtime import (
    EXCERPT_BYTES,
    FULL_SENDS,
    PAGE_CHARS,
    THRESHOLD_BYTES,
    ObservationPack,
    RecallError,
    handle_for,
)
from evoarena.runtime.observation_pack import excerpt
from evoarena.runtime.reducer import RECEIPT_PREFIX


def _log(n_bytes: int, line: str = "PASSED tests/test_mod.py::test_case\n") -> str:
    text = (line * (n_bytes // len(line.encode()) + 1)).encode()[:n_bytes].decode("utf-8", "ignore")
    return text


def test_the_seed_constants() -> None:
    assert (THRESHOLD_BYTES, FULL_SENDS, EXCERPT_BYTES, PAGE_CHARS) == (10 * 1024, 2, 1024, 4096)


def test_an_output_over_10_kib_goes_whole_twice_then_as_a_handle() -> None:
    pack = ObservationPack()
    big = _log(50_000)
    kinds = [pack.send(big, source="pytest") for _ in range(4)]
    assert [p.kind for p in kinds] == ["full", "full", "handle", "handle"]
    assert [p.send_number for p in kinds] == [1, 2, 3, 4]
    assert kinds[0].text == big and kinds[1].text == big
    third = kinds[2]
    assert third.handle == handle_for(big, "pytest") and third.handle in third.text
    assert third.text == kinds[3].text  # the placeholder is stable too
    assert big not in third.text and 1024 < third.sent_bytes < 2048
    assert hashlib.sha256(big.encode()).hexdigest() in third.text


def test_the_threshold_is_strictly_more_than_10_kib() -> None:
    pack = ObservationPack()
    at = _log(THRESHOLD_BYTES)
    over = _log(THRESHOLD_BYTES + 1)
    assert len(at.encode()) == THRESHOLD_BYTES and len(over.encode()) == THRESHOLD_BYTES + 1
    assert {pack.send(at).kind for _ in range(3)} == {"passthrough"}
    assert [pack.send(over).kind for _ in range(3)] == ["full", "full", "handle"]
    # bytes, not characters: 4000 three-byte characters are 12 000 bytes, over the threshold
    wide = "中" * 4000
    assert [pack.send(wide).kind for _ in range(3)] == ["full", "full", "handle"]


def test_the_same_output_means_same_source_and_same_content() -> None:
    pack = ObservationPack()
    big = _log(20_000)
    pack.send(big, source="cat")
    pack.send(big, source="grep")  # another source: its own count
    assert pack.send(big, source="cat").kind == "full"
    assert pack.send(big, source="cat").kind == "handle"
    assert pack.send(big, source="grep").kind == "full"
    assert pack.send(big + "x", source="cat").kind == "full"  # one character more: another output
    assert handle_for(big, "cat") != handle_for(big, "grep") != handle_for(big)
    assert handle_for(big, "cat") == ObservationPack().send(big, source="cat").handle  # stable across packs
    assert handle_for(big).startswith("obs_") and len(handle_for(big)) == 4 + 24


def test_errors_and_reducer_receipts_pass_through_whole() -> None:
    pack = ObservationPack()
    big = _log(30_000)
    assert {pack.send(big, error=True).kind for _ in range(4)} == {"passthrough"}
    receipt = RECEIPT_PREFIX + "\n" + _log(30_000)
    assert {pack.send(receipt).kind for _ in range(4)} == {"passthrough"}
    assert pack.handles() == ()


def test_the_excerpt_is_whole_head_and_tail_lines_within_1_kib() -> None:
    lines = [f"line {i:05d} " + "x" * 39 + "\n" for i in range(1000)]  # 51 bytes each
    big = "".join(lines)
    pack = ObservationPack()
    for _ in range(3):
        out = pack.send(big)
    assert lines[0] in out.text and lines[9] in out.text and lines[10] not in out.text  # 10 lines of 51 bytes
    assert lines[-1].rstrip("\n") in out.text and lines[-10] in out.text and lines[-11] not in out.text
    head = excerpt(big, 512, from_end=False)
    tail = excerpt(big, 512, from_end=True)
    assert big.startswith(head) and big.endswith(tail) and head.endswith("\n")
    assert len(head.encode()) <= 512 and len(tail.encode()) <= 512


def test_lines_end_at_newlines_only() -> None:
    text = "progress 10%\rprogress 100%\n" + "y" * 600 + "\n" + "tail\u2028same line\n"
    assert excerpt(text, 100, from_end=False) == "progress 10%\rprogress 100%\n"
    assert excerpt(text, 100, from_end=True) == "tail\u2028same line\n"


def test_one_long_line_still_gets_an_excerpt_cut_at_a_character_boundary() -> None:
    one_line = "é" * 20_000  # 40 000 bytes, no newline, every character 2 bytes
    head = excerpt(one_line, 511, from_end=False)
    tail = excerpt(one_line, 511, from_end=True)
    assert head == "é" * 255 and tail == "é" * 255  # 255 × 2 = 510 ≤ 511: never half a character


@pytest.mark.parametrize("alphabet", ["ascii", "mixed"])
def test_recall_pages_are_exact_and_join_to_the_original(alphabet: str) -> None:
    if alphabet == "ascii":
        text = "".join(f"{i:06d} ok\n" for i in range(2001))  # 20 010 characters
    else:  # 1-, 2-, 3- and 4-byte characters, so page ends land inside multi-byte runs
        text = "".join(f"{i} café 中文 ✓ 🎉 naïve\n" for i in range(800))
    pack = ObservationPack(page_chars=1000)
    for _ in range(3):
        handle = pack.send(text, source="t").handle
    assert handle is not None
    pages = pack.pages(handle)
    assert pages == -(-len(text) // 1000) and pages > 3
    got = [pack.recall(handle, p) for p in range(pages)]
    for p, page in enumerate(got):
        assert page.text == text[p * 1000:(p + 1) * 1000] and (page.start, page.end) == (p * 1000, page.start +
                                                                                           len(page.text))
        assert page.text.encode("utf-8").decode("utf-8") == page.text  # each page is valid UTF-8 on its own
    assert all(len(g.text) == 1000 for g in got[:-1]) and 0 < len(got[-1].text) < 1000 and got[-1].last
    joined = "".join(g.text for g in got)
    assert joined == text
    assert hashlib.sha256(joined.encode()).hexdigest() == pack.sha256(handle) == hashlib.sha256(
        text.encode()).hexdigest()
    assert b"".join(g.text.encode() for g in got) == text.encode()  # byte for byte, boundaries included
    assert pack.recall_all(handle) == text
    if alphabet == "mixed":
        assert len(text.encode()) > len(text)  # the test did exercise multi-byte characters


def test_recall_out_of_range_and_unknown_handles_are_clear_errors() -> None:
    pack = ObservationPack()
    big = _log(12_000)
    handle = pack.send(big).handle
    assert handle is not None and pack.pages(handle) == 3  # 12 000 characters, 4096 per page
    with pytest.raises(RecallError, match=r"page 3 is out of range: obs_\w+ has 3 page\(s\), 0\.\.2"):
        pack.recall(handle, 3)
    with pytest.raises(RecallError, match="page -1 is out of range"):
        pack.recall(handle, -1)
    with pytest.raises(RecallError, match="unknown handle 'obs_000'"):
        pack.recall("obs_000", 0)
    assert pack.recall(handle, 2).text == big[8192:]  # recall works from the first send on
    assert "next page: none (last page)" in pack.recall(handle, 2).render()
    assert pack.recall(handle, 0).render().endswith(big[:4096])


def test_stats_count_bytes_sent_against_raw() -> None:
    pack = ObservationPack()
    big, small = _log(40_000), "ok\n"
    for _ in range(5):
        pack.send(big)
    pack.send(small)
    s = pack.stats
    placeholder = len(pack.placeholder(handle_for(big)).encode())
    assert (s.sends, s.full, s.placeholders, s.passthrough, s.stored) == (6, 2, 3, 1, 1)
    assert s.raw_bytes == 5 * 40_000 + 3
    assert s.sent_bytes == 2 * 40_000 + 3 * placeholder + 3
    assert s.saved_bytes == 3 * (40_000 - placeholder) and s.sent_fraction < 0.45
    pack.recall(handle_for(big), 0)
    assert (pack.stats.recalls, pack.stats.recall_bytes) == (1, 4096)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="page_chars"):
        ObservationPack(page_chars=0)
    with pytest.raises(ValueError):
        ObservationPack(full_sends=-1)


def test_a_handle_collision_fails_open_with_the_whole_output(monkeypatch: pytest.MonkeyPatch) -> None:
    import evoarena.runtime.observation_pack as op

    monkeypatch.setattr(op, "handle_for", lambda text, source="": "obs_" + "0" * 24)
    pack = ObservationPack()
    a, b = _log(20_000), _log(20_000, line="other\n")
    assert pack.send(a).kind == "full"
    out = pack.send(b)
    assert (out.kind, out.text, out.handle) == ("passthrough", b, None)
    assert pack.recall_all("obs_" + "0" * 24) == a  # the stored output is still the first one
