"""How the demo experiment's readout spreads over draws, and which seeds give a typical one.

seed_demo simulates 12,000 UVs in one room for 14 days, 80/20, with the published lifts. Its
GMV readout is very noisy at that size; this script shows how noisy, without the database
(the simulation and the statistics package are pure; `test_readout_end_to_end.py` checks the
database path gives the same numbers for a given draw):

    python scripts/demo_readout_spread.py                 # 200 draws, random assignment
    python scripts/demo_readout_spread.py --seeds 1000
    python scripts/demo_readout_spread.py --pick --seeds 2000   # seeds near the truth with
                                                                # the demo's fixed salts

Run from the repository root with the project importable (PYTHONPATH=.).
"""

from __future__ import annotations

import argparse
import os

import numpy as np

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")


def main() -> None:
    import django

    django.setup()
    from console.management.commands import seed_demo
    from experiments_app.assignment import Allocation
    from experiments_app.stats.readout import metric_readout
    from experiments_app.stats.simulation import TrafficModel, simulate_experiment

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--uvs", type=int, default=seed_demo.DEMO_UVS)
    parser.add_argument("--pick", action="store_true", help="assign with the demo's salts")
    args = parser.parse_args()
    gmv_lift, views_lift = seed_demo.DEMO_GMV_LIFT, seed_demo.DEMO_VIEWS_LIFT
    allocation = Allocation(
        seed_demo.DEMO_ARM_SALT,
        seed_demo.DEMO_COVERAGE_SALT,
        "default",
        0,
        10_000,
        10_000,
        (8000, 2000),
    )
    rows = []
    for seed in range(args.seeds):
        assigned = None
        if args.pick:  # the hash assignment seed_demo's experiment makes
            keys = (f"sim{seed}-{i}" for i in range(args.uvs))
            assigned = np.array([allocation.assign(k) for k in keys], dtype=np.int8)
        sim = simulate_experiment(
            n_uvs=args.uvs,
            treatment_weight=0.2,
            gmv_lift=gmv_lift,
            views_lift=views_lift,
            model=TrafficModel(days=seed_demo.DEMO_DAYS, rooms=1),
            seed=seed,
            assigned_arm=assigned,
        )
        units = sim.units()
        gmv = metric_readout(*units.arm_stats("gmv", ratio=False), kind="mean", cuped=True)
        views = metric_readout(*units.arm_stats("views", ratio=False), kind="mean", cuped=True)
        assert gmv.mde is not None
        rows.append((seed, gmv.relative, gmv.headline_relative, views.relative,
                     views.headline_relative, gmv.mde.mde_relative))  # fmt: skip

    mde = np.array([r[5] for r in rows])
    if args.pick:
        near = [
            r
            for r in rows
            if abs(r[1].estimate - gmv_lift) < 0.03
            and abs(r[2].estimate - gmv_lift) < 0.03
            and abs(r[4].estimate - views_lift) < 0.01
            and abs(r[3].estimate - views_lift) < 0.03
        ]
        near.sort(key=lambda r: abs(r[5] - np.median(mde)))  # typical interval width first
        print(f"{len(near)} of {len(rows)} seeds near the truth; MDE median {np.median(mde):.0%}")
        for seed, g, gc, v, vc, m in near[:10]:
            print(
                f"seed {seed}: GMV {g.estimate:+.2%} [{g.ci_low:+.1%}, {g.ci_high:+.1%}], "
                f"CUPED {gc.estimate:+.2%}; views {v.estimate:+.2%}, CUPED {vc.estimate:+.2%}; "
                f"MDE {m:.0%}"
            )
        return

    print(f"{len(rows)} draws of {args.uvs} UVs, true GMV lift {gmv_lift:+.3%}")
    for label, index in (("GMV relative", 1), ("GMV relative, CUPED", 2)):
        est = np.array([r[index].estimate for r in rows])
        low = np.array([r[index].ci_low for r in rows])
        high = np.array([r[index].ci_high for r in rows])
        p = np.array([r[index].p_value for r in rows])
        q5, q25, q50, q75, q95 = np.percentile(est, [5, 25, 50, 75, 95])
        print(
            f"{label}: mean {est.mean():+.2%} (se {est.std(ddof=1) / np.sqrt(est.size):.1%}), "
            f"median {q50:+.2%}, sd {est.std(ddof=1):.1%}; "
            f"5/25/75/95%: {q5:+.1%} {q25:+.1%} {q75:+.1%} {q95:+.1%}"
        )
        print(
            f"  CI covers the truth {np.mean((low <= gmv_lift) & (gmv_lift <= high)):.1%}; "
            f"significant drop {np.mean((p < 0.05) & (est < 0)):.1%}, "
            f"significant rise {np.mean((p < 0.05) & (est > 0)):.1%}"
        )
    print(f"GMV MDE (80% power): median {np.median(mde):.1%}")
    views = np.array([r[4].estimate for r in rows])
    print(
        f"views CUPED (true {views_lift:+.3%}): mean {views.mean():+.2%}, "
        f"sd {views.std(ddof=1):.2%}"
    )


if __name__ == "__main__":
    main()
