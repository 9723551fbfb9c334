"""Learning-curve helpers of the episodic report views: a curve's AUC and late mean, per-condition means."""

from __future__ import annotations

from evoarena.envs.curves import condition_means, curve


def test_a_curve_has_its_auc_and_late_mean() -> None:
    c = curve([0.0, 0.0, 1.0, 1.0])
    assert c == {"scores": [0.0, 0.0, 1.0, 1.0], "auc": 0.5, "late_mean": 1.0}


def test_condition_means_average_cells_and_skip_rows_without_a_curve() -> None:
    rows = [{"condition": "a", **curve([1.0, 0.0])}, {"condition": "b", **curve([0.0])},
            {"condition": "a", **curve([0.0, 0.0])}, {"condition": "b", "auc": None, "late_mean": None}]
    assert condition_means(rows) == [{"condition": "a", "cells": 2, "auc": 0.25, "late_mean": 0.0},
                                     {"condition": "b", "cells": 1, "auc": 0.0, "late_mean": 0.0}]
