"""drill.calc.reliability against published figures, bad arguments, and `drill calc reliability`."""

from __future__ import annotations

import json
import math

import pytest

from drill.calc import reliability
from drill.calc.expressions import FUNCTIONS
from drill.cli import main

HOUR = 3600.0
DAY = 86400.0
MINUTE = 60.0

# Llama 3 (Grattafiori et al. 2024, arXiv:2407.21783), section 3.3.4: in a 54-day snapshot of
# pre-training on 16K H100s there were 466 interruptions, 47 planned and 419 unexpected;
# section 3.3.2 / Table 4: the 405B run used 16,384 GPUs.
LLAMA3_DAYS = 54
LLAMA3_UNEXPECTED = 419
LLAMA3_GPUS = 16_384

# bigscience/bloom model card: 176,247,271,424 parameters; "Bf16 weights: 329GB",
# "Full checkpoint with optimizer states: 2.3TB" (binary units, as 329 GiB = 2 B x 176.2e9 shows).
BLOOM_PARAMS = 176_247_271_424


def test_llama3_cluster_mtbf_is_about_three_hours():
    # 54 days / 419 interruptions = 3.09 h between unexpected interruptions
    # (reported as "one failure every three hours" in coverage of the paper)
    job_mtbf = reliability.mtbf_from_failures(LLAMA3_DAYS * DAY, LLAMA3_UNEXPECTED)
    assert job_mtbf / HOUR == pytest.approx(3.09, abs=0.01)


def test_llama3_implied_per_gpu_mtbf_and_back():
    per_gpu = reliability.mtbf_from_failures(LLAMA3_DAYS * DAY, LLAMA3_UNEXPECTED, LLAMA3_GPUS)
    # every interruption charged to the GPUs: ~50,700 h, about 5.8 years per GPU
    assert per_gpu / HOUR == pytest.approx(50_677, rel=1e-3)
    assert per_gpu / (8766 * HOUR) == pytest.approx(5.78, abs=0.01)
    # failures add: dividing by the GPU count gives back the job's ~3.09 h
    assert reliability.cluster_mtbf(per_gpu, LLAMA3_GPUS) / HOUR == pytest.approx(3.09, abs=0.01)
    # at the same per-GPU rate a 100,000-GPU job would stop about every half hour
    assert reliability.cluster_mtbf(per_gpu, 100_000) / MINUTE == pytest.approx(30.4, abs=0.1)


def test_failure_probability_exponential():
    mtbf = reliability.mtbf_from_failures(LLAMA3_DAYS * DAY, LLAMA3_UNEXPECTED)
    # P(at least one failure in one MTBF) = 1 - 1/e for exponential failures
    assert reliability.failure_probability(mtbf, mtbf) == pytest.approx(1 - math.exp(-1))
    # at Llama 3's observed rate a 24 h window almost surely sees one: 1 - exp(-419/54)
    assert reliability.failure_probability(DAY, mtbf) == pytest.approx(1 - math.exp(-LLAMA3_UNEXPECTED / 54))
    assert reliability.failure_probability(0, mtbf) == 0


def test_checkpoint_bytes_bloom():
    # bf16 weights alone: 352.5e9 B = 328.3 GiB, the card's "329GB"
    weights = reliability.checkpoint_bytes(BLOOM_PARAMS, weight_bytes=2, optimizer_bytes=0)
    assert weights / 2**30 == pytest.approx(329, rel=0.005)
    # with fp32 master, momentum and variance (12 B): 2.24 TiB, within 3 % of the card's "2.3TB"
    full = reliability.checkpoint_bytes(BLOOM_PARAMS)
    assert full == BLOOM_PARAMS * 14
    assert full / 2**40 == pytest.approx(2.3, rel=0.03)


def test_checkpoint_write_time():
    # Llama 3 (arXiv:2407.21783, section 3.3.1): Tectonic sustains 2 TB/s and peaks at 7 TB/s.
    # BLOOM's 14 B/param checkpoint at the sustained rate:
    seconds = reliability.checkpoint_write_time(reliability.checkpoint_bytes(BLOOM_PARAMS), 2e12)
    assert seconds == pytest.approx(BLOOM_PARAMS * 14 / 2e12)
    assert reliability.checkpoint_write_time(7e12, 7e12) == 1.0


@pytest.mark.parametrize(
    ("mtbf_h", "expected_min", "tolerance"),
    [
        # Daly 2006, Future Generation Computer Systems 22(3), figure captions, all with δ = 5 min
        # (Ts = 500 h, R = 10 min): M = 24 h -> 117 min; M = 6 h -> 57 min; M = 15 min -> 9.1 min
        (24, 117, 0.5),
        (6, 57, 0.5),
        (0.25, 9.1, 0.05),
    ],
)
def test_daly_interval_matches_dalys_figures(mtbf_h, expected_min, tolerance):
    interval = reliability.daly_interval(5 * MINUTE, mtbf_h * HOUR)
    assert interval / MINUTE == pytest.approx(expected_min, abs=tolerance)


def test_young_interval_is_the_first_order_term():
    # Young 1974 (CACM 17(9)): sqrt(2 δ M). For Daly's Fig. 3 case (δ = 5 min, M = 24 h) that is
    # exactly 120 min, which Daly's higher-order estimate lowers to 117 min.
    assert reliability.young_interval(5 * MINUTE, 24 * HOUR) / MINUTE == pytest.approx(120)
    assert reliability.daly_interval(5 * MINUTE, 24 * HOUR) < reliability.young_interval(5 * MINUTE, 24 * HOUR)


def test_daly_interval_saturates_when_checkpoints_are_too_slow():
    # Daly 2006: for δ >= 2M the optimum is M
    assert reliability.daly_interval(3 * HOUR, 1 * HOUR) == 1 * HOUR


def test_overhead_fraction_at_youngs_interval():
    c, m = 5 * MINUTE, 24 * HOUR
    t = reliability.young_interval(c, m)
    # C/T + T/(2M) at T = sqrt(2CM) is sqrt(2C/M): sqrt(600/86400) = 8.3 %
    assert reliability.overhead_fraction(t, c, m) == pytest.approx(math.sqrt(2 * c / m))
    # it is the minimum of the first-order cost
    assert reliability.overhead_fraction(t * 1.2, c, m) > reliability.overhead_fraction(t, c, m)
    assert reliability.overhead_fraction(t / 1.2, c, m) > reliability.overhead_fraction(t, c, m)
    # a restart of R adds R/M
    assert reliability.overhead_fraction(t, c, m, 10 * MINUTE) == pytest.approx(math.sqrt(2 * c / m) + 10 * MINUTE / m)


def test_expected_lost_time_llama3_window():
    # 419 failures in 54 days; with a 30 min interval and 10 min restarts each costs 25 min
    lost = reliability.expected_lost_time(
        LLAMA3_DAYS * DAY,
        reliability.mtbf_from_failures(LLAMA3_DAYS * DAY, LLAMA3_UNEXPECTED),
        30 * MINUTE,
        10 * MINUTE,
    )
    assert lost == pytest.approx(LLAMA3_UNEXPECTED * 25 * MINUTE)


def test_card_functions_are_exposed_to_cards():
    for name, function in reliability.CARD_FUNCTIONS.items():
        assert FUNCTIONS[name] is function


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: reliability.cluster_mtbf(0, 8), "mtbf_one"),
        (lambda: reliability.cluster_mtbf(1000, 0), "units"),
        (lambda: reliability.cluster_mtbf(1000, 2.5), "units"),
        (lambda: reliability.mtbf_from_failures(100, 0), "failures"),
        (lambda: reliability.mtbf_from_failures(-1, 3), "window"),
        (lambda: reliability.failure_probability(-1, 10), "window"),
        (lambda: reliability.failure_probability(1, 0), "mtbf"),
        (lambda: reliability.checkpoint_bytes(-1), "params"),
        (lambda: reliability.checkpoint_bytes(1e9, optimizer_bytes=-4), "optimizer_bytes"),
        (lambda: reliability.checkpoint_write_time(1e12, 0), "bandwidth"),
        (lambda: reliability.checkpoint_write_time(float("inf"), 1e9), "size_bytes"),
        (lambda: reliability.young_interval(0, 3600), "checkpoint_time"),
        (lambda: reliability.daly_interval(60, -1), "mtbf"),
        (lambda: reliability.overhead_fraction(0, 60, 3600), "interval"),
        (lambda: reliability.overhead_fraction(600, 60, 3600, restart_time=-1), "restart_time"),
        (lambda: reliability.expected_lost_time(86400, 0, 600), "mtbf"),
        (lambda: reliability.young_interval("5 min", 3600), "checkpoint_time"),
    ],
)
def test_bad_arguments_name_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


def test_cli_reliability_json_llama3(capsys):
    code = main(
        [
            "calc",
            "reliability",
            "--mtbf",
            "50677h",
            "--gpus",
            "16384",
            "--window",
            "54d",
            "--checkpoint-time",
            "5min",
            "--restart-time",
            "10min",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["cluster_mtbf_s"] / HOUR == pytest.approx(3.09, abs=0.01)
    assert out["failures_in_window"] == pytest.approx(LLAMA3_UNEXPECTED, rel=1e-3)
    assert out["p_failure_in_window"] == pytest.approx(1.0)
    mtbf = out["cluster_mtbf_s"]
    assert out["young_interval_s"] == pytest.approx(math.sqrt(2 * 300 * mtbf))
    assert out["daly_interval_s"] == pytest.approx(reliability.daly_interval(300, mtbf))
    assert out["overhead_at_daly"] == pytest.approx(
        reliability.overhead_fraction(out["daly_interval_s"], 300, mtbf, 600)
    )


def test_cli_reliability_checkpoint_from_params(capsys):
    code = main(
        [
            "calc",
            "reliability",
            "--mtbf",
            "50000h",
            "--gpus",
            "1024",
            "--params",
            "176B",
            "--bandwidth",
            "2TB",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["checkpoint_bytes"] == pytest.approx(176e9 * 14)
    assert out["checkpoint_s"] == pytest.approx(176e9 * 14 / 2e12)


def test_cli_reliability_rejects_a_bad_time(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["calc", "reliability", "--mtbf", "5 GB", "--gpus", "8"])
    assert exc.value.code == 2
    assert "not a time" in capsys.readouterr().err


def test_cli_reliability_rejects_a_checkpoint_longer_than_two_mtbfs(capsys):
    code = main(["calc", "reliability", "--mtbf", "1000h", "--gpus", "1000", "--checkpoint-time", "3h"])
    assert code == 2
    assert "MTBF" in capsys.readouterr().err


@pytest.mark.parametrize("written", ["2TB/s", "2 TB/s", "2TB", "2e12"])
def test_cli_reliability_bandwidth_reads_a_rate_or_the_bytes_of_each_second(capsys, written):
    argv = ["calc", "reliability", "--mtbf", "50000h", "--gpus", "1024", "--params", "176B", "--json"]
    assert main([*argv, "--bandwidth", written]) == 0
    assert json.loads(capsys.readouterr().out)["checkpoint_s"] == pytest.approx(176e9 * 14 / 2e12)


def test_cli_reliability_bandwidth_refuses_a_time(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["calc", "reliability", "--mtbf", "50000h", "--gpus", "8", "--params", "7B", "--bandwidth", "3ms"])
    assert exc.value.code == 2
    assert "'3ms' is a time, not a bandwidth" in capsys.readouterr().err
