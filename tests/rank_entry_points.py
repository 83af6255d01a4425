"""The private rank aggregators as one table, for the tests that run each on every kind of source
(test_one_source, test_sources_tables)"""

from privrank import core, footrule, kemeny

CALLS = {
    "borda, central": lambda d, **kw: core.dp_borda_aggregate(d, **kw),
    "borda, local": lambda d, **kw: core.dp_borda_aggregate(d, model="local", **kw),
    "kemeny": lambda d, **kw: kemeny.dp_kemeny_aggregate(d, **kw),
    "kemeny, small n": lambda d, **kw: kemeny.dp_kemeny_aggregate(d, regime="small_n", **kw),
    "footrule, central": lambda d, **kw: footrule.dp_footrule_aggregate(d, **kw),
    "footrule, local": lambda d, **kw: footrule.dp_footrule_aggregate(d, model="local", **kw),
}
