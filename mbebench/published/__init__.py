"""Published MBE implementations as engines (docs/published.md).

``codes``: each code declared once (repository, commit, patches, build, input, output);
``fetch``: its archive downloaded and verified by commit; ``build``: patched and built once
per machine and commit into ``resources/engines/``; ``engine``: a run on one graph (input
written from the CSR, the program run, its count and time read, a 32-bit count flagged).
Their source is never part of this repository: the pipeline fetches it where it runs.
"""
