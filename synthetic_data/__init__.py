"""Sample data generators: deterministic billing exports and telemetry for demos, tests and benchmarks.

No real account's data is needed. The generators write each provider's published layout and may import
the connectors in `sources` (their column catalogues and payload builders), never `pipelines`. Their
command lines are the modules in `synthetic_data.cli`.
"""
