"""Selection and acceptance policies of self-evolving searches, on plain scores: which candidate to mutate next,
and whether a child is kept. The lowest floor: nothing here imports the rest of the package."""

from evoarena.search.archive import Scored, archive_of, mean
from evoarena.search.base import Gate, ParentPolicy, Verdict
from evoarena.search.frontier import Admission, BoundedFrontier
from evoarena.search.gates import Aggregate, NonRegression, StrictImprovement
from evoarena.search.greedy import BestMean, best_index
from evoarena.search.pareto import ParetoSampler, fronts, pareto_weights

__all__ = [
    "Admission",
    "Aggregate",
    "BestMean",
    "BoundedFrontier",
    "Gate",
    "NonRegression",
    "ParentPolicy",
    "ParetoSampler",
    "Scored",
    "StrictImprovement",
    "Verdict",
    "archive_of",
    "best_index",
    "fronts",
    "mean",
    "pareto_weights",
]
