"""What every connector shares, so a file quirk, a type or a rejection rule is handled once.

Connectors (`sources/<provider>/`) import from here and never from each other
(tests/sources/test_connector_imports.py enforces it).
"""
