"""The label-semantics screen of new ProTeGi prompts: a dropped label, a rule line moved to the other label, a binary
mapping inverted; a paraphrase that keeps the mapping passes."""

from __future__ import annotations

from evoarena.methods.protegi.label_check import Flip, label_check

LABELS = ["Billing", "Shipping"]
RULES = "Classify the ticket.\nBilling: invoice, portal\nShipping: parcel, address\n"


def test_a_rule_line_moved_to_the_other_label_is_a_flip() -> None:
    child = "Classify the ticket.\nShipping: invoice, portal\nBilling: parcel, address\n"
    found = label_check(RULES, child, LABELS)
    assert found.flip and found.missing == []
    assert Flip(word="invoice", before="Billing", after="Shipping") in found.flipped
    assert {f.word for f in found.flipped} == {"invoice", "portal", "parcel", "address"}


def test_a_dropped_label_is_missing() -> None:
    found = label_check(RULES, "Classify the ticket.\nBilling: invoice, portal\n", LABELS)
    assert found.missing == ["Shipping"] and found.flipped == [] and found.flip


def test_an_inverted_binary_instruction_is_a_flip() -> None:
    labels = ["No", "Yes"]
    parent = "Answer Yes if the claim is true, No if the claim is false."
    child = "Answer No if the claim is true, Yes if the claim is false."
    assert {f.word for f in label_check(parent, child, labels).flipped} == {"true", "false"}


def test_a_paraphrase_that_keeps_the_mapping_passes() -> None:
    child = "Sort every ticket.\nBilling: portal, invoice, refund\nShipping: parcel, address\n"
    assert not label_check(RULES, child, LABELS).flip
    assert not label_check(RULES, RULES, ["Billing"]).flip  # one label: nothing to check
