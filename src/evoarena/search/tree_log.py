"""A candidate of a method's search pool as the run's event log records it (`search_node` events), so the viewer can
draw any pool as the tree it is without knowing the method: each event states what is known of one node now — its
parents, whether it joined the pool, the score it was judged by and the text it proposed. A later event about the
same node (a new score) supersedes the earlier; a proposal that was turned away has no id and is a leaf."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

SEARCH_NODE = "search_node"
TEXT_CHARS = 4000  # how much of a proposed text an event keeps (the version's files keep all of an accepted one)


class SearchNode(BaseModel):
    """One candidate: `node` its id in the method's pool (None for a proposal turned away), `parents` the pool ids
    it came from (a merge has two), `accepted` whether it joined the pool, `score` what it was judged by
    (`score_label` says which: "val mean", "minibatch sum"…), `text` what it proposed (the rewritten component),
    `version` the harness version it was played as, when it became one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node: str | None = None
    parents: list[str]
    accepted: bool
    score: float | None = None
    score_label: str = ""
    text: str | None = None
    component: str | None = None
    version: str | None = None

    def payload(self) -> dict[str, object]:
        """The event's payload (the text cut to TEXT_CHARS)."""
        text = self.text if self.text is None or len(self.text) <= TEXT_CHARS else self.text[:TEXT_CHARS] + " …"
        return self.model_copy(update={"text": text}).model_dump(exclude_none=True)
