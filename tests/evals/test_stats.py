import json
import math

import pandas as pd
import pytest

from evals.stats import (
    Ratio,
    cohens_kappa,
    confusion_matrix,
    label_order,
    per_label_precision_recall,
)

Z95 = 1.959963984540054  # standard normal 97.5% quantile


def wilson_closed_form(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


# --- Ratio --------------------------------------------------------------------------------


def test_wilson_41_of_42_matches_closed_form():
    low, high = Ratio(41, 42).wilson
    expected_low, expected_high = wilson_closed_form(41, 42)
    assert low == pytest.approx(expected_low, abs=1e-4)
    assert high == pytest.approx(expected_high, abs=1e-4)
    assert round(low, 4) == 0.8768
    assert round(high, 4) == 0.9958


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (3, 8), (0, 10), (10, 10), (7, 13), (500, 1000)])
def test_wilson_matches_closed_form(k, n):
    low, high = Ratio(k, n).wilson
    expected_low, expected_high = wilson_closed_form(k, n)
    assert low == pytest.approx(max(expected_low, 0.0), abs=1e-9)
    assert high == pytest.approx(min(expected_high, 1.0), abs=1e-9)
    assert 0.0 <= low <= k / n <= high <= 1.0


def test_format_with_percent():
    ratio = Ratio(41, 42)
    assert ratio.value == pytest.approx(41 / 42)
    assert ratio.format() == "41 / 42 (97.6%)"
    assert str(ratio) == "41 / 42 (97.6%)"
    assert ratio.format_interval() == "[87.7%, 99.6%]"


def test_format_at_threshold_of_ten():
    assert Ratio(9, 10).format() == "9 / 10 (90.0%)"
    assert Ratio(9, 10).format_interval().endswith("%]")
    assert Ratio(8, 9).format() == "8 / 9"


def test_small_denominator_has_no_percent():
    ratio = Ratio(3, 8)
    assert ratio.format() == "3 / 8"
    assert "%" not in ratio.format()
    # 3/8 Wilson: [0.1368, 0.6943]
    assert ratio.format_interval() == "[0.14, 0.69]"


def test_zero_denominator():
    ratio = Ratio(0, 0)
    assert ratio.value is None
    assert ratio.wilson is None
    assert ratio.format() == "0 / 0"
    assert ratio.format_interval() == "—"
    assert ratio.to_dict() == {
        "numerator": 0,
        "denominator": 0,
        "value": None,
        "wilson_low": None,
        "wilson_high": None,
        "display": "0 / 0",
    }


def test_to_dict_is_json_serialisable():
    import numpy as np

    data = Ratio(np.int64(41), np.int64(42)).to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["numerator"] == 41 and data["denominator"] == 42
    assert data["value"] == pytest.approx(41 / 42)
    assert data["wilson_low"] == pytest.approx(wilson_closed_form(41, 42)[0], abs=1e-9)
    assert data["display"] == "41 / 42 (97.6%)"


@pytest.mark.parametrize(("k", "n", "error"), [(5, 4, ValueError), (-1, 3, ValueError), (1.0, 2, TypeError), (True, 2, TypeError)])
def test_ratio_validation(k, n, error):
    with pytest.raises(error):
        Ratio(k, n)


def test_ratio_is_frozen():
    ratio = Ratio(1, 2)
    with pytest.raises(AttributeError):
        ratio.numerator = 2


# --- confusion matrix ---------------------------------------------------------------------


def test_confusion_matrix_orientation_and_order():
    gold = ["pass", "pass", "fail", "fail", "fail"]
    pred = ["pass", "fail", "fail", "fail", "pass"]
    matrix = confusion_matrix(gold, pred, ["pass", "fail"])
    assert list(matrix.index) == ["pass", "fail"]
    assert list(matrix.columns) == ["pass", "fail"]
    assert matrix.index.name == "gold"
    assert matrix.columns.name == "predicted"
    # rows gold, columns predicted
    assert matrix.at["pass", "pass"] == 1
    assert matrix.at["pass", "fail"] == 1
    assert matrix.at["fail", "pass"] == 1
    assert matrix.at["fail", "fail"] == 2
    assert int(matrix.to_numpy().sum()) == len(gold)


def test_confusion_matrix_appends_unseen_labels_sorted_and_keeps_unused():
    gold = ["b", "zeta", "b"]
    pred = ["alpha", "b", "b"]
    matrix = confusion_matrix(gold, pred, ["b", "unused", "b"])
    assert list(matrix.index) == ["b", "unused", "alpha", "zeta"]
    assert list(matrix.columns) == ["b", "unused", "alpha", "zeta"]
    assert matrix.loc["unused"].sum() == 0
    assert matrix.at["b", "alpha"] == 1
    assert matrix.at["zeta", "b"] == 1
    assert matrix.at["b", "b"] == 1


def test_label_order():
    assert label_order(["c", "a"], ["b", "a"], ["a"]) == ["a", "b", "c"]


def test_confusion_matrix_empty():
    matrix = confusion_matrix([], [], ["x", "y"])
    assert isinstance(matrix, pd.DataFrame)
    assert matrix.shape == (2, 2)
    assert int(matrix.to_numpy().sum()) == 0


def test_length_mismatch_raises():
    with pytest.raises(ValueError):
        confusion_matrix(["a"], [], ["a"])
    with pytest.raises(ValueError):
        cohens_kappa(["a"], [], ["a"])


# --- kappa --------------------------------------------------------------------------------


def _expand(table: dict[tuple[str, str], int]) -> tuple[list[str], list[str]]:
    gold: list[str] = []
    pred: list[str] = []
    for (g, p), count in table.items():
        gold += [g] * count
        pred += [p] * count
    return gold, pred


def test_kappa_2x2_by_hand():
    # rows gold, columns pred: [[20, 5], [10, 15]], n = 50
    # p_o = 35/50 = 0.7; p_e = (25*30 + 25*20) / 50^2 = 0.5; kappa = (0.7-0.5)/(1-0.5) = 0.4
    gold, pred = _expand({("y", "y"): 20, ("y", "n"): 5, ("n", "y"): 10, ("n", "n"): 15})
    assert cohens_kappa(gold, pred, ["y", "n"]) == pytest.approx(0.4)


def test_kappa_3x3_by_hand():
    # [[5, 1, 0], [1, 3, 1], [0, 1, 4]], n = 16; p_o = 12/16 = 0.75
    # row totals 6, 5, 5; column totals 6, 5, 5; p_e = (36 + 25 + 25) / 256 = 86/256
    gold, pred = _expand(
        {("a", "a"): 5, ("a", "b"): 1, ("b", "a"): 1, ("b", "b"): 3, ("b", "c"): 1, ("c", "b"): 1, ("c", "c"): 4}
    )
    p_e = 86 / 256
    assert cohens_kappa(gold, pred, ["a", "b", "c"]) == pytest.approx((0.75 - p_e) / (1 - p_e))


def test_kappa_perfect_and_label_order_invariant():
    gold = ["a", "b", "a", "c"]
    assert cohens_kappa(gold, gold, ["a", "b", "c"]) == pytest.approx(1.0)
    pred = ["a", "a", "b", "c"]
    assert cohens_kappa(gold, pred, ["a", "b", "c"]) == pytest.approx(cohens_kappa(gold, pred, ["c", "b", "a"]))


def test_kappa_worse_than_chance_is_negative():
    # p_o = 0, p_e = 0.5 -> kappa = -1
    assert cohens_kappa(["a", "b"], ["b", "a"], ["a", "b"]) == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("gold", "pred", "labels"),
    [
        ([], [], ["a", "b"]),
        (["a", "a", "a"], ["a", "a", "a"], ["a"]),
        (["a", "a", "a"], ["a", "a", "a"], ["a", "b"]),  # unused label does not help
    ],
)
def test_kappa_undefined_is_none(gold, pred, labels):
    assert cohens_kappa(gold, pred, labels) is None


# --- precision / recall -------------------------------------------------------------------


def test_per_label_precision_recall():
    gold = ["pass", "pass", "fail", "fail", "fail"]
    pred = ["pass", "fail", "fail", "fail", "pass"]
    result = per_label_precision_recall(gold, pred, ["pass", "fail"])
    assert list(result) == ["pass", "fail"]
    assert result["pass"]["precision"] == Ratio(1, 2)
    assert result["pass"]["recall"] == Ratio(1, 2)
    assert result["fail"]["precision"] == Ratio(2, 3)
    assert result["fail"]["recall"] == Ratio(2, 3)
    assert isinstance(result["fail"]["precision"].numerator, int)


def test_per_label_precision_recall_unused_and_extra_labels():
    gold = ["a", "a", "b"]
    pred = ["a", "x", "b"]
    result = per_label_precision_recall(gold, pred, ["a", "b", "never"])
    assert list(result) == ["a", "b", "never", "x"]
    assert result["a"]["precision"] == Ratio(1, 1)
    assert result["a"]["recall"] == Ratio(1, 2)
    assert result["never"]["precision"].format() == "0 / 0"
    assert result["never"]["recall"].format() == "0 / 0"
    assert result["x"]["precision"] == Ratio(0, 1)
    assert result["x"]["recall"] == Ratio(0, 0)
