"""Selection and acceptance policies of self-evolving searches, on plain scores: which candidate to mutate next,
and whether a child is kept. The lowest floor: nothing here imports the rest of the package."""

from evoarena.search.archive import Scored, archive_of, mean
from evoarena.search.base import Gate, ParentPolicy, Verdict
from evoarena.search.clade import (
    PARENT_POLICIES,
    AmongExpandable,
    CladeThompson,
    GreedyExpandable,
    NodeThompson,
    NothingToExpand,
    expand_now,
    expandable,
    posterior_mean,
    to_evaluate,
)
from evoarena.search.dgm import DGMParent, dgm_weight, dgm_weights, sigmoid
from evoarena.search.frontier import Admission, BoundedFrontier
from evoarena.search.gates import Aggregate, NonRegression, StrictImprovement
from evoarena.search.greedy import BestMean, best_index
from evoarena.search.islands import Island, IslandParent, Islands, Trial
from evoarena.search.lineage import child_counts, children_of, clade_results, depths
from evoarena.search.pareto import ParetoSampler, fronts, pareto_weights
from evoarena.search.pareto_context import ContextParetoSampler, context_frontier, dominates
from evoarena.search.ucb import EvoTestUCB, exploration, ucb_scores

__all__ = [
    "Admission",
    "Aggregate",
    "AmongExpandable",
    "BestMean",
    "BoundedFrontier",
    "CladeThompson",
    "ContextParetoSampler",
    "DGMParent",
    "EvoTestUCB",
    "Gate",
    "GreedyExpandable",
    "Island",
    "IslandParent",
    "Islands",
    "NodeThompson",
    "NonRegression",
    "NothingToExpand",
    "PARENT_POLICIES",
    "ParentPolicy",
    "ParetoSampler",
    "Scored",
    "StrictImprovement",
    "Trial",
    "Verdict",
    "archive_of",
    "best_index",
    "child_counts",
    "children_of",
    "clade_results",
    "context_frontier",
    "depths",
    "dgm_weight",
    "dgm_weights",
    "dominates",
    "expand_now",
    "expandable",
    "exploration",
    "fronts",
    "mean",
    "pareto_weights",
    "posterior_mean",
    "sigmoid",
    "to_evaluate",
    "ucb_scores",
]
