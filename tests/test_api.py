"""The rules every public private function of privrank shares (issue 12): for now, the privacy record.

Every public function that spends privacy (it takes `epsilon` and draws randomness) returns a result carrying the same
record (`privrank.core.privacy_record`: epsilon, delta, model, privacy_unit, private, noise, one vocabulary), with the
noise path it ran on; the registry below must cover every such function, so a new one cannot skip the record."""

import inspect

import numpy as np
import pytest
import scipy.sparse as sp

from privrank import audit, btl, cli, core, datasets, footrule, kemeny, mc, rr, tree

R = core.sample_plackett_luce(np.linspace(1, 0, 5), 40, rng=0)
USER, I, J, Y = btl.ranks_to_comparisons(R)
RAT = sp.csr_array(
    np.random.default_rng(0).normal(size=(30, 6)) * (np.random.default_rng(1).random((30, 6)) < 0.6)
    + 0.0
)
RAT = RAT[np.diff(RAT.indptr) > 0]

RECORDS = {  # one call per public function that spends privacy; each must return a result with the privacy record
    "core.dp_borda_aggregate": lambda: core.dp_borda_aggregate(R, epsilon=1.0, rng=0),
    "tree.range_count_tree": lambda: tree.range_count_tree(R[:, 0], 5, epsilon=1.0, rng=0),
    "tree.private_position_costs": lambda: tree.private_position_costs(
        R, epsilon=1.0, delta=1e-6, model="local", rng=0
    ),
    "tree.private_apxmed": lambda: tree.private_apxmed(R[:, 0], 5, epsilon=1.0, rng=0),
    "footrule.dp_footrule_aggregate": lambda: footrule.dp_footrule_aggregate(R, epsilon=1.0, rng=0),
    "footrule.naive_dp_footrule_aggregate": lambda: footrule.naive_dp_footrule_aggregate(
        R, epsilon=1.0, delta=1e-6, rng=0
    ),
    "footrule.dp_pairwise_indegree_aggregate": lambda: footrule.dp_pairwise_indegree_aggregate(
        R, epsilon=1.0, rng=0
    ),
    "kemeny.noisy_margins_instance": lambda: kemeny.noisy_margins_instance(
        R, epsilon=1.0, delta=0.0, rng=0
    ),
    "kemeny.clipped_noisy_instance": lambda: kemeny.clipped_noisy_instance(
        R, epsilon=1.0, delta=1e-6, rng=0
    ),
    "kemeny.bucketed_instance": lambda: kemeny.bucketed_instance(
        R, epsilon=1.0, delta=1e-6, n_buckets=2, rng=0
    ),
    "kemeny.dp_kemeny_aggregate": lambda: kemeny.dp_kemeny_aggregate(
        R, epsilon=1.0, delta=1e-6, rng=0
    ),
    "rr.privatize": lambda: rr.privatize(I, J, Y, USER, epsilon=1.0, rng=0),
    "btl.private_btl": lambda: btl.private_btl(I, J, Y, USER, n_items=5, epsilon=1.0, rng=0),
    "btl.dp_btl_aggregate": lambda: btl.dp_btl_aggregate(R, epsilon=1.0, rng=0),
    "btl.dp_btl_aggregate_comparisons": lambda: btl.dp_btl_aggregate_comparisons(
        I, J, Y, USER, n_items=5, epsilon=1.0, rng=0
    ),
    "cli.dp_btl_aggregate": lambda: cli.dp_btl_aggregate(
        cli.Pairs(USER, I, J, Y.astype(float), 5), epsilon=1.0, rng=0
    ),
    "mc.private_frank_wolfe": lambda: mc.private_frank_wolfe(
        RAT, epsilon=1.0, delta=1e-6, nuclear_norm=1.0, n_iter=2, row_norm=1.0, rng=0
    ),
    "mc.private_pgd": lambda: mc.private_pgd(
        RAT, epsilon=1.0, delta=1e-6, nuclear_norm=1.0, n_iter=2, row_norm=1.0, rng=0
    ),
    "mc.private_svd_cleansing": lambda: mc.private_svd_cleansing(
        RAT, epsilon=1.0, delta=1e-6, rng=0
    ),
    "mc.complete": lambda: mc.complete(RAT, epsilon=1.0, delta=1e-6, n_iter=2, rng=0),
}
RAW = {  # spend privacy but return the raw draws (arrays) a mechanism is built from, not a result
    "rr.randomized_response",
    "core.release",
    "core.exact_noise",
    "core.rr_flips",
    "audit.audit_epsilon",
    "audit.run_mechanism",
    "cli.run_method",
    "cli.demo_rows",
}


def _spenders():
    "Public callables of every module whose signature takes `epsilon` and `rng`"
    out = set()
    for mod in (core, rr, btl, tree, footrule, kemeny, mc, datasets, audit, cli):
        for name in mod.__all__:
            f = getattr(mod, name)
            if not callable(f) or inspect.isclass(f):
                continue
            try:
                params = inspect.signature(f).parameters
            except (TypeError, ValueError):
                continue
            if "epsilon" in params and "rng" in params:
                out.add(f"{mod.__name__.split('.')[-1]}.{name}")
    return out


def test_registry_covers_every_function_that_spends_privacy():
    missing = _spenders() - set(RECORDS) - RAW
    assert not missing, (
        f"public functions that spend privacy with no privacy-record check: {sorted(missing)}"
    )


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("name", sorted(RECORDS))
def test_every_private_result_carries_the_privacy_record(name, mode):
    with core.use_noise(mode):
        rec = core.privacy_record(RECORDS[name]())
    assert rec["private"] and rec["noise"] == mode and rec["epsilon"] > 0, (name, rec)
