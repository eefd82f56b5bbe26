# One insertion sort for both CPU engines (baselines/_sort.py), against the tree before it:
# old = `git archive eddebb2` in /tmp/base, new = the change; this 2-core VM, 2026-11-26.
MBEBENCH_PROGRESS_S=0 python benchmarks/cpu/ab_engines.py --old /tmp/base --new . --repeats 11 \
    .csr/opsahl-ucforum.csr .csr/movielens-10m_ut.csr .csr/marvel.csr .csr/movielens-10m_ti.csr \
    --json ab-engines.json
