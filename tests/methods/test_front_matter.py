"""The front matter of an Agent Skill's SKILL.md, read apart from its body."""

from __future__ import annotations

from evoarena.methods.front_matter import strip_front_matter


def test_strip_front_matter() -> None:
    assert strip_front_matter("---\nname: a\ndescription: b: c\n---\nbody\n") == ({"name": "a",
                                                                                   "description": "b: c"}, "body\n")
    assert strip_front_matter("no front matter\n") == ({}, "no front matter\n")


def test_a_byte_order_mark_before_the_block_leaves_the_body_whole() -> None:
    assert strip_front_matter("\ufeff---\nname: a\n---\nbody\n") == ({"name": "a"}, "body\n")
