"""mbe-bench: shared pipeline code (ingest, CSR, fingerprint, engine interface, results)."""

__version__ = "0.1.0"
